import { useEffect, useState } from 'preact/hooks';
import { api, type Device } from '../kit/api';
import { navigate, query, usePath } from '../kit/router';
import { LiveIndicator, useLiveData } from '../kit/live';
import { Banner, Card, Empty, NoticeBanner, Spinner } from '../kit/ui';
import { GroupDetailView } from './group-detail';
import {
  GROUP_EVENTS,
  NOT_CONNECTED,
  Outcomes,
  failureText,
  groupsPath,
  parseNumbers,
  useGroupAction,
  type GroupDetail,
  type GroupSummary,
  type ParticipantOutcome,
} from './group-members';
import './groups.css';
import { useCanChange } from '../kit/session';
import { RowButton, TableHead } from '../kit/table';

/**
 * A device's groups (`/dashboard/devices/<id>/groups`, docs/groups.md): the account's groups, one
 * opened by `?group=<id>` (group-detail.tsx), a new group with its first members, and joining one
 * by its invite link. Everything goes through the device's WhatsApp connection: the list is read
 * when the page opens and when the event stream says a group changed, never polled.
 */
export function GroupsPage(props: { deviceId: string }) {
  usePath();
  const open = query('group');
  const base = `/dashboard/devices/${encodeURIComponent(props.deviceId)}/groups`;
  const [ownPhone, setOwnPhone] = useState<string | undefined>(undefined);
  const [left, setLeft] = useState<string | undefined>(undefined);
  useEffect(() => {
    api<{ device: Device }>(`/devices/${encodeURIComponent(props.deviceId)}`)
      .then((r) => setOwnPhone(r.device.phone))
      .catch(() => undefined);
  }, [props.deviceId]);

  const openGroup = (id: string) => {
    setLeft(undefined);
    navigate(`${base}?group=${encodeURIComponent(id)}`);
  };
  const back = () => navigate(base);

  if (open) {
    return (
      <GroupDetailView
        key={open}
        deviceId={props.deviceId}
        groupId={open}
        ownPhone={ownPhone}
        onBack={back}
        onLeft={(subject) => {
          setLeft(subject);
          back();
        }}
      />
    );
  }
  return <GroupsIndex deviceId={props.deviceId} left={left} onOpen={openGroup} />;
}

/** The list of the account's groups, and the forms that make or join one. */
function GroupsIndex(props: { deviceId: string; left?: string; onOpen: (id: string) => void }) {
  const can = useCanChange();
  // Read when the page opens and again when a group.updated event says a group changed (one
  // query to WhatsApp per read, so at most one every 2 s).
  const {
    data: groups,
    error: loadError,
    loading,
    refresh,
    live,
  } = useLiveData(
    () =>
      api<{ data: { groups: GroupSummary[] } }>(groupsPath(props.deviceId)).then(
        (r) => r.data.groups,
        (err: unknown) => {
          throw new Error(failureText(err));
        },
      ),
    { device: props.deviceId, types: GROUP_EVENTS, minGapMs: 2000 },
    [props.deviceId],
  );
  return (
    <div class="groups-page">
      <section class="card" aria-labelledby="groups-title" aria-busy={loading}>
        <div class="groups-head">
          <div class="page-title">
            <h2 id="groups-title">Groups of this account</h2>
            <LiveIndicator state={live} />
          </div>
          <RowButton kind="secondary" disabled={loading} onClick={() => void refresh()}>
            Refresh
          </RowButton>
        </div>
        {props.left !== undefined && (
          <Banner kind="success">
            The account left <bdi class="strong">{props.left}</bdi>.
          </Banner>
        )}
        {loadError && <Banner kind={loadError === NOT_CONNECTED ? 'info' : 'error'}>{loadError}</Banner>}
        {!groups && !loadError && <Spinner label="Asking WhatsApp for the account's groups…" />}
        {groups && <GroupList groups={groups} onOpen={props.onOpen} />}
      </section>
      {can && !(loadError === NOT_CONNECTED) && (
        <div class="groups-forms">
          <CreateSection deviceId={props.deviceId} onCreated={props.onOpen} />
          <JoinSection deviceId={props.deviceId} onJoined={props.onOpen} />
        </div>
      )}
    </div>
  );
}

function GroupList(props: { groups: GroupSummary[]; onOpen: (id: string) => void }) {
  if (props.groups.length === 0) {
    return (
      <Empty>This account is in no group yet. Create one below, or join one with its invite link.</Empty>
    );
  }
  const sorted = [...props.groups].sort((a, b) => a.subject.localeCompare(b.subject));
  return (
    <table class="table responsive groups-table" data-testid="groups">
      <TableHead columns={['Subject', { label: 'Members', class: 'num' }, 'This account']} actions scope />
      <tbody>
        {sorted.map((g) => (
          <tr key={g.id} data-testid={`group-${g.id}`}>
            <td data-label="Subject" class="group-subject-cell">
              <bdi class="strong group-subject">{g.subject}</bdi>
              <span class="muted small mono group-id" title={g.id}>
                {g.id}
              </span>
              {g.announce && <span class="badge badge-announce">Only admins send</span>}
            </td>
            <td data-label="Members" class="num">
              {g.size}
            </td>
            <td data-label="This account">
              <span class={`badge ${g.isAdmin ? 'badge-role-admin' : ''}`}>
                {g.isAdmin ? 'Admin' : 'Member'}
              </span>
            </td>
            <td class="row-actions">
              <RowButton kind="secondary" label={`Open ${g.subject}`} onClick={() => props.onOpen(g.id)}>
                Open
              </RowButton>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A new group: its subject and first members (the account is its creator and an admin). */
function CreateSection(props: { deviceId: string; onCreated: (id: string) => void }) {
  const [subject, setSubject] = useState('');
  const [numbers, setNumbers] = useState('');
  const [outcomes, setOutcomes] = useState<ParticipantOutcome[]>([]);
  const { busy, notice, act } = useGroupAction();
  const participants = parseNumbers(numbers);
  const create = (e: Event) => {
    e.preventDefault();
    void act(async () => {
      setOutcomes([]);
      const r = await api<{ data: { group?: GroupDetail; participants: ParticipantOutcome[] } }>(
        groupsPath(props.deviceId),
        { json: { subject: subject.trim(), participants } },
      );
      setOutcomes(r.data.participants);
      if (r.data.participants.every((p) => p.ok) && r.data.group) {
        props.onCreated(r.data.group.id);
        return undefined;
      }
      setSubject('');
      setNumbers('');
      return r.data.group ? 'The group is made; some participants were not added:' : 'No group was made:';
    }, 'Could not create the group');
  };
  return (
    <Card id="group-create-title" title="New group">
      <form onSubmit={create} noValidate>
        <label for="group-new-subject">Subject</label>
        <input
          id="group-new-subject"
          dir="auto"
          maxLength={100}
          value={subject}
          onInput={(e) => setSubject(e.currentTarget.value)}
        />
        <label for="group-new-members" class="group-field">
          Members
        </label>
        <textarea
          id="group-new-members"
          rows={3}
          placeholder="15551234567, 15557654321"
          aria-describedby="group-new-members-hint"
          value={numbers}
          onInput={(e) => setNumbers(e.currentTarget.value)}
        />
        <p class="hint" id="group-new-members-hint">
          Numbers with the country code, one per line or separated by commas (1 to 50). This account becomes
          the group's admin.
        </p>
        <button type="submit" class="primary" disabled={busy || !subject.trim() || participants.length === 0}>
          {busy ? 'Creating…' : 'Create group'}
        </button>
      </form>
      <NoticeBanner notice={notice} />
      <Outcomes outcomes={outcomes} done="added" testId="create-outcomes" />
    </Card>
  );
}

/** Joining a group with its invite link (or the code at its end). */
function JoinSection(props: { deviceId: string; onJoined: (id: string) => void }) {
  const [code, setCode] = useState('');
  const { busy, notice, act } = useGroupAction();
  const join = (e: Event) => {
    e.preventDefault();
    void act(async () => {
      const r = await api<{ data: { group: GroupDetail } }>(`${groupsPath(props.deviceId)}/join`, {
        json: { code: code.trim() },
      });
      props.onJoined(r.data.group.id);
      return undefined;
    }, 'Could not join');
  };
  return (
    <Card id="group-join-title" title="Join by invite link">
      <form onSubmit={join} noValidate>
        <label for="group-join-code">Invite link or code</label>
        <input
          id="group-join-code"
          autocomplete="off"
          placeholder="https://chat.whatsapp.com/…"
          value={code}
          onInput={(e) => setCode(e.currentTarget.value)}
        />
        <p class="hint">The account joins at once, as if it opened the link on the phone.</p>
        <button type="submit" class="primary" disabled={busy || !code.trim()}>
          {busy ? 'Joining…' : 'Join group'}
        </button>
      </form>
      <NoticeBanner notice={notice} />
    </Card>
  );
}
