import { useState } from 'preact/hooks';
import { useAction } from '../kit/action';
import { api, ApiFailure } from '../kit/api';
import { ownEntry, phone as plus } from '../kit/format';
import { Confirm, NoticeBanner } from '../kit/ui';
import { useCanChange } from '../kit/session';
import { RowButton, TableHead } from '../kit/table';

/** GET /groups's entries (docs/groups.md). */
export interface GroupSummary {
  id: string;
  subject: string;
  size: number;
  announce: boolean;
  isAdmin: boolean;
}
export interface GroupMember {
  contact: { phone?: string; lid?: string };
  admin: boolean;
}
/** GET /groups/:id. */
export interface GroupDetail extends GroupSummary {
  description?: string;
  locked: boolean;
  participants: GroupMember[];
}
/** How a create or a participant change went for one participant, in the request's order. */
export interface ParticipantOutcome {
  participant: string;
  ok: boolean;
  reason?: string;
  code?: string;
}

/** The events that say a group changed (the pages read it again). */
export const GROUP_EVENTS = ['group.updated'] as const;

/** The admin API's group routes of a device. */
export const groupsPath = (deviceId: string) => `/devices/${encodeURIComponent(deviceId)}/groups`;

export const NOT_CONNECTED =
  'The device is not connected: its groups are read and changed through its WhatsApp connection. Link or reconnect it in Settings.';

/** An API failure as the pages say it: "not connected" in words, else the API's own message. */
export function failureText(err: unknown): string {
  return err instanceof ApiFailure && err.status === 409 ? NOT_CONNECTED : (err as Error).message;
}

/** The kit's useAction, its failures said as the group pages say them (failureText). */
export const useGroupAction = () => useAction((failure, err) => `${failure}: ${failureText(err)}`);

/**
 * Numbers as the API takes them, from what an operator pastes: one per line or separated by
 * commas or spaces, "+", dashes and brackets dropped; a `<digits>@lid` stays as it is.
 */
export function parseNumbers(text: string): string[] {
  const seen = new Set<string>();
  for (const part of text.split(/[\n,;]+/)) {
    const raw = part.trim();
    if (!raw) continue;
    const id = raw.endsWith('@lid') ? raw : raw.replace(/[\s()+.-]/g, '');
    if (id) seen.add(id);
  }
  return [...seen];
}

const REASONS: Record<string, string> = {
  not_admin: 'the account is not an admin of the group',
  not_allowed: "the contact's privacy settings refuse being added: send them the invite link",
  not_on_whatsapp: 'not on WhatsApp',
  already_member: 'already a member',
  not_member: 'not a member',
  recently_left: 'left the group recently: WhatsApp lets them be added again later',
  group_full: 'the group is full',
  failed: 'WhatsApp refused',
};

/** A member or a participant as a person reads it: "+digits", or the LID when that is all there is. */
export function memberName(id: string | { phone?: string; lid?: string }): string {
  if (typeof id === 'string') return id.endsWith('@lid') ? id : plus(id);
  return id.phone ? plus(id.phone) : (id.lid ?? '?');
}

/** What a create or change did, participant by participant. */
export function Outcomes(props: { outcomes: ParticipantOutcome[]; done: string; testId: string }) {
  if (props.outcomes.length === 0) return null;
  return (
    <ul class="group-outcomes" data-testid={props.testId}>
      {props.outcomes.map((o) => (
        <li key={o.participant} class={o.ok ? 'ok' : 'refused'}>
          <span class="mono">{memberName(o.participant)}</span>:{' '}
          {o.ok
            ? props.done
            : `${ownEntry(REASONS, o.reason ?? 'failed') ?? o.reason}${o.code ? ` (${o.code})` : ''}`}
        </li>
      ))}
    </ul>
  );
}

type MemberAction = 'remove' | 'promote' | 'demote';
const DONE: Record<MemberAction | 'add', string> = {
  add: 'added',
  remove: 'removed',
  promote: 'is an admin now',
  demote: 'is a member now (no longer an admin)',
};

/**
 * The group's members with their roles; an admin of the group adds members, removes them (after a
 * Confirm) and promotes or demotes them. The account itself is marked "You" and has no buttons:
 * it leaves the group with "Leave group".
 */
export function MembersSection(props: {
  deviceId: string;
  group: GroupDetail;
  ownPhone?: string;
  onChanged: () => Promise<void>;
}) {
  const { group } = props;
  // What the account may do as the group's admin, if the console's role may change things.
  const can = useCanChange();
  const manage = group.isAdmin && can;
  const path = `${groupsPath(props.deviceId)}/${encodeURIComponent(group.id)}/participants`;
  const { busy, notice, act } = useGroupAction();
  const [outcomes, setOutcomes] = useState<{ list: ParticipantOutcome[]; done: string }>({
    list: [],
    done: '',
  });
  const [adding, setAdding] = useState('');
  const [removing, setRemoving] = useState<GroupMember | undefined>(undefined);

  const change = (action: MemberAction | 'add', participants: string[]) =>
    act(async () => {
      setOutcomes({ list: [], done: '' });
      const r = await api<{ data: { participants: ParticipantOutcome[] } }>(path, {
        json: { action, participants },
      });
      setOutcomes({ list: r.data.participants, done: DONE[action] });
      await props.onChanged();
      return undefined;
    }, 'Could not change the members');
  const idOf = (m: GroupMember) => m.contact.phone ?? m.contact.lid ?? '';
  const add = async (e: Event) => {
    e.preventDefault();
    const numbers = parseNumbers(adding);
    if (numbers.length === 0) return;
    if (await change('add', numbers)) setAdding('');
  };
  const remove = async () => {
    if (!removing) return;
    await change('remove', [idOf(removing)]);
    setRemoving(undefined);
  };
  const isSelf = (m: GroupMember) => !!props.ownPhone && m.contact.phone === props.ownPhone;
  const members = [...group.participants].sort(
    (a, b) => Number(isSelf(b)) - Number(isSelf(a)) || Number(b.admin) - Number(a.admin),
  );

  return (
    <section class="card" aria-labelledby="group-members-title">
      <h2 id="group-members-title">
        Members <span class="muted small">({group.participants.length})</span>
      </h2>
      {!group.isAdmin && (
        <p class="muted small" data-testid="members-not-admin">
          Only an admin of the group adds, removes, promotes or demotes members; this account is not one.
        </p>
      )}
      <table class="table responsive group-members" data-testid="group-members">
        <TableHead columns={['Member', 'Role']} actions={manage} scope />
        <tbody>
          {members.map((m) => {
            const name = memberName(m.contact);
            return (
              <tr key={idOf(m)} data-testid={`member-${idOf(m)}`}>
                <td data-label="Member" class="member-cell">
                  <span class="mono">{name}</span>
                  {isSelf(m) && <span class="badge group-self">You</span>}
                  {m.contact.phone && m.contact.lid && (
                    <span class="muted small mono member-lid" title={m.contact.lid}>
                      {m.contact.lid}
                    </span>
                  )}
                </td>
                <td data-label="Role">
                  <span class={`badge ${m.admin ? 'badge-role-admin' : ''}`}>
                    {m.admin ? 'Admin' : 'Member'}
                  </span>
                </td>
                {manage && (
                  <td class="row-actions">
                    {!isSelf(m) && (
                      <>
                        <RowButton
                          kind="secondary"
                          disabled={busy}
                          label={`${m.admin ? 'Demote' : 'Make admin'} ${name}`}
                          onClick={() => void change(m.admin ? 'demote' : 'promote', [idOf(m)])}
                        >
                          {m.admin ? 'Demote' : 'Make admin'}
                        </RowButton>
                        <RowButton
                          kind="danger-outline"
                          disabled={busy}
                          label={`Remove ${name}`}
                          onClick={() => setRemoving(m)}
                        >
                          Remove
                        </RowButton>
                      </>
                    )}
                  </td>
                )}
              </tr>
            );
          })}
        </tbody>
      </table>
      <Outcomes outcomes={outcomes.list} done={outcomes.done} testId="member-outcomes" />
      <NoticeBanner notice={notice} />
      {manage && (
        <form class="group-add" onSubmit={(e) => void add(e)} noValidate>
          <label for="group-add-numbers">Add members</label>
          <textarea
            id="group-add-numbers"
            rows={2}
            placeholder="15551234567, 15557654321"
            aria-describedby="group-add-hint"
            value={adding}
            onInput={(e) => setAdding(e.currentTarget.value)}
          />
          <p class="hint" id="group-add-hint">
            Numbers with the country code, one per line or separated by commas (at most 50).
          </p>
          <button type="submit" class="primary" disabled={busy || parseNumbers(adding).length === 0}>
            Add
          </button>
        </form>
      )}
      {removing && (
        <Confirm
          title="Remove this member?"
          confirmLabel="Remove"
          busy={busy}
          onConfirm={() => void remove()}
          onCancel={() => setRemoving(undefined)}
        >
          <p>
            <span class="mono">{memberName(removing.contact)}</span> leaves{' '}
            <bdi class="strong">{group.subject}</bdi>; the members see that an admin removed them. They can
            come back only if an admin adds them or they use the invite link.
          </p>
        </Confirm>
      )}
    </section>
  );
}
