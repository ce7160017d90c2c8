import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Role, Session } from './api';

/**
 * Who is signed in, as every page sees it: the operator (every workspace), or one workspace's
 * `admin` or `agent` (a user of it, or the operator viewing it as its admin). Pages offer only
 * what the role may do: the API refuses the rest anyway (404 for the operator's routes in a
 * workspace, 403 `Your role cannot do this` for an agent's change), and a button that can only
 * fail is no button to show.
 */
export interface Who {
  session: Session;
  role: Role;
  /** The workspace the session is scoped to; absent for the operator's own view. */
  workspace?: { id: string; name: string };
  /** The operator's own view: every workspace, the operator-only pages. */
  operator: boolean;
  /** May change settings, devices, tokens, pools (not an agent). */
  canChange: boolean;
  /**
   * Reads the session again (after the operator opened or left a workspace) and goes to `to`: the
   * whole shell follows the new scope, every page loaded again.
   */
  reload: (to: string) => Promise<void>;
}

export function whoIs(session: Session, reload: Who['reload'] = async () => undefined): Who {
  const role = session.role ?? 'operator';
  const workspace = session.workspace;
  return {
    session,
    role,
    ...(workspace ? { workspace } : {}),
    operator: role === 'operator' && !workspace,
    canChange: role !== 'agent',
    reload,
  };
}

const SIGNED_OUT: Who = whoIs({ via: 'session' });

export const WhoContext = createContext<Who>(SIGNED_OUT);

/** The signed-in session as the pages read it. */
export function useWho(): Who {
  return useContext(WhoContext);
}

/** Whether the signed-in role may change things (every role but `agent`). */
export function useCanChange(): boolean {
  return useContext(WhoContext).canChange;
}

/** How the header names who is signed in: "ana · Acme Ltd (admin)", or "Operator". */
export function whoLabel(who: Who): string {
  if (who.operator) return 'Operator';
  const where = who.workspace?.name ?? who.workspace?.id ?? '';
  if (who.session.viewing) return `Operator viewing ${where}`;
  return `${who.session.user ?? 'Signed in'} · ${where} (${who.role})`;
}
