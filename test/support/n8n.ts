/**
 * What the tests that run the package in a real n8n share (test/integrations/n8n*.test.ts): n8n
 * and the package installed before the stack starts; workflows as n8n's `import:workflow` takes
 * them — a manual trigger and a chain of nodes, the package's action node on a credential; and the
 * items a node of a run put out.
 */
import { ensureN8n, packN8nNodes, type N8nInstall, type N8nRun } from '@mgw/testing';

/**
 * n8n and the package, installed and built unless cached (minutes on a cold machine): a `before`
 * hook of the suite, registered before its stack's so that it runs first. Answers what it installed.
 */
export function useN8nInstall(): () => { install: N8nInstall; nodesTarball: string } {
  let installed: { install: N8nInstall; nodesTarball: string } | undefined;
  before(async function () {
    this.timeout(20 * 60_000);
    installed = { install: await ensureN8n(), nodesTarball: (await packN8nNodes()).tarball };
  });
  return () => {
    if (!installed) throw new Error('n8n is not installed yet (use it inside a test or hook)');
    return installed;
  };
}

export interface WorkflowNode {
  name: string;
  type: string;
  parameters: Record<string, unknown>;
  id?: string;
  typeVersion?: number;
  position?: number[];
  webhookId?: string;
  credentials?: Record<string, { id: string; name: string }>;
  onError?: string;
}
export interface Workflow {
  id?: string;
  name: string;
  nodes: WorkflowNode[];
  connections: Record<string, unknown>;
  settings?: Record<string, unknown>;
}

/** The items a node of a run put out (its first run, first output). */
export const itemsOf = (run: N8nRun, node: string) =>
  run.data.resultData.runData[node]?.[0]?.data?.main?.[0] ?? [];

/**
 * The package's action node on `credential`; with `onError` (`continueRegularOutput`) a failure
 * is its item's `{ error, … }` and the run goes on.
 */
export function gatewayNode(
  name: string,
  parameters: Record<string, unknown>,
  credential: { id: string; name: string },
  onError?: string,
): WorkflowNode {
  return {
    name,
    type: 'n8n-nodes-messenger-gateway.messengerGateway',
    typeVersion: 1,
    parameters,
    credentials: { messengerGatewayApi: { ...credential } },
    ...(onError ? { onError } : {}),
  };
}

/**
 * A workflow run by hand (`n8n execute`): a manual trigger `Run`, then `nodes` one after the
 * other (each one's items the next one's input), left to right; `idOf(n)` is the id of the n-th
 * node (0: the trigger).
 */
export function manualChain(
  id: string,
  name: string,
  idOf: (n: number) => string,
  nodes: WorkflowNode[],
): Workflow {
  const trigger: WorkflowNode = {
    name: 'Run',
    type: 'n8n-nodes-base.manualTrigger',
    typeVersion: 1,
    parameters: {},
  };
  const all = [trigger, ...nodes].map((node, n) => ({ ...node, id: idOf(n), position: [n * 220, 300] }));
  return {
    id,
    name,
    nodes: all,
    connections: Object.fromEntries(
      all
        .slice(0, -1)
        .map((from, n) => [from.name, { main: [[{ node: all[n + 1]!.name, type: 'main', index: 0 }]] }]),
    ),
    settings: { executionOrder: 'v1' },
  };
}
