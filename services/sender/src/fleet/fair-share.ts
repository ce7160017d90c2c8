import type { RosterView } from '@mgw/store';

/**
 * The fair share of the devices that follows from the roster of live senders (`SenderRoster` of
 * @mgw/store, where every sender beats with the number of devices it holds), and the handovers
 * that bring an over-share sender back to it.
 */

/** ceil(linked / live senders), capped by `cap` (0 = no cap). */
export function fairShare(linked: number, liveSenders: number, cap: number): number {
  const share = Math.ceil(linked / Math.max(1, liveSenders));
  return cap > 0 ? Math.min(cap, share) : share;
}

/**
 * Which devices an over-share sender gives to whom: the excess over its share goes to the live
 * senders below their share, least loaded first, each up to what it lacks. Nothing is given when
 * nobody can take it (everyone at the share or the cap).
 */
export function planHandovers(
  self: string,
  held: readonly string[],
  view: RosterView,
  share: number,
): { deviceId: string; to: string }[] {
  let excess = held.length - share;
  if (excess <= 0) return [];
  const takers = [...view.loads]
    .filter(([owner, load]) => owner !== self && load < share)
    .sort((a, b) => a[1] - b[1]);
  const plan: { deviceId: string; to: string }[] = [];
  let next = held.length - 1;
  for (const [owner, load] of takers) {
    for (let room = share - load; room > 0 && excess > 0; room--, excess--)
      plan.push({ deviceId: held[next--]!, to: owner });
    if (excess === 0) break;
  }
  return plan;
}
