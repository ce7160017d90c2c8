import { expect } from 'chai';
import type { GroupMetadata } from '@whiskeysockets/baileys';
import { completeAuthors, GroupDirectory, type GroupChangeNotice } from '../../src/index.js';

const GROUP = '120363000000000001@g.us';
const bob = { phone: '15551910012', lid: '861669288465899@lid' };
const alice = { phone: '15551910011', lid: '861669288465898@lid' };

/** The group as WhatsApp shows a LID-addressed one: members by LID, their phone beside. */
function groupOf(subject: string, members: { phone: string; lid: string }[]): GroupMetadata {
  return {
    id: GROUP,
    subject,
    addressingMode: 'lid',
    participants: members.map((m) => ({ id: m.lid, phoneNumber: `${m.phone}@s.whatsapp.net`, admin: null })),
  } as unknown as GroupMetadata;
}

/** A directory whose queries answer `answer` (WhatsApp's view now), counting them. */
function directoryAnswering(answer: GroupMetadata) {
  const asked: string[] = [];
  const socket = { groupMetadata: async (jid: string) => (asked.push(jid), answer) };
  return { directory: new GroupDirectory(() => socket as never), asked };
}

const subjectBy = (author: GroupChangeNotice['author']): GroupChangeNotice => ({
  id: GROUP,
  ...(author ? { author } : {}),
  byAccount: false,
  change: { type: 'subject', subject: 'Renamed by Bob' },
});

describe("messenger: a group change's author named by phone and LID (completeAuthors, GroupDirectory)", () => {
  it('When the author changed the group and left before the change is read (the cache dropped, WhatsApp no longer lists them), then the member seen before names them', async () => {
    const { directory, asked } = directoryAnswering(groupOf('Renamed by Bob', [alice]));
    // The group as the account saw it when it was added, then the change drops the cached entry.
    directory.onChange([groupOf('Elsewhere', [alice, bob])]);
    directory.onChange([{ id: GROUP, subject: 'Renamed by Bob' }]);
    expect(directory.cachedMembers(GROUP)).to.equal(undefined);

    const [notice] = await completeAuthors([subjectBy({ lid: bob.lid })], new Map(), directory);
    expect(notice!.author).to.deep.equal(bob);
    expect(asked, 'no query when the member is known').to.deep.equal([]);
  });

  it('When the author was never seen, then WhatsApp is asked once and a member listed there names them; one listed nowhere keeps the id it came with', async () => {
    const { directory, asked } = directoryAnswering(groupOf('Elsewhere', [alice, bob]));
    const [found] = await completeAuthors([subjectBy({ lid: bob.lid })], new Map(), directory);
    expect(found!.author).to.deep.equal(bob);
    expect(asked).to.deep.equal([GROUP]);

    const stranger = { lid: '999999999999999@lid' };
    const [unknown] = await completeAuthors([subjectBy(stranger)], new Map(), directory);
    expect(unknown!.author).to.deep.equal(stranger);
  });

  it('When the socket belongs to a new link (clear), then members seen under the old one are forgotten', async () => {
    const { directory } = directoryAnswering(groupOf('Elsewhere', [alice]));
    directory.onChange([groupOf('Elsewhere', [alice, bob])]);
    expect(directory.knownIdentity({ phone: bob.phone })).to.deep.equal(bob);
    directory.clear();
    expect(directory.knownIdentity({ lid: bob.lid })).to.equal(undefined);
  });
});
