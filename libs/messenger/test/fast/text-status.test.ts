import { expect } from 'chai';
import type { BinaryNode } from '@whiskeysockets/baileys';
import { whatsappErrorCode } from '../../src/groups.js';
import { mutationOutcome, setTextStatus } from '../../src/text-status.js';
import type { WASocket } from '../../src/socket.js';

const answer = (body: unknown): BinaryNode => ({
  tag: 'iq',
  attrs: { type: 'result' },
  content: [{ tag: 'result', attrs: {}, content: Buffer.from(JSON.stringify(body)) }],
});

describe('messenger: the about as a text status (whatsmeow 662b0121)', () => {
  it('When the about is set, then the mutation goes first (its text, null to clear), then the legacy iq', async () => {
    const sent: string[] = [];
    const variables: unknown[] = [];
    const sock = {
      generateMessageTag: () => 'tag-1',
      query: async (node: BinaryNode) => {
        const query = (node.content as BinaryNode[])[0]!;
        sent.push(`${node.attrs.xmlns}:${query.attrs.query_id}`);
        variables.push(JSON.parse(Buffer.from(query.content as Uint8Array).toString()).variables);
        return answer({ data: { xwa2_update_text_status: { result: 'SUCCESS' } } });
      },
      updateProfileStatus: async (text: string) => void sent.push(`status:${text}`),
    } as unknown as WASocket;
    await setTextStatus(sock, 'Back at 9');
    await setTextStatus(sock, '');
    expect(sent).to.deep.equal([
      'w:mex:9152604461510864',
      'status:Back at 9',
      'w:mex:9152604461510864',
      'status:',
    ]);
    expect(variables).to.deep.equal([
      { input: { text: 'Back at 9', ephemeral_duration_sec: 0 } },
      { input: { text: null, ephemeral_duration_sec: 0 } },
    ]);
  });

  it('When WhatsApp answers a GraphQL error or no result, then it throws with the error code', () => {
    expect(() =>
      mutationOutcome(answer({ data: { xwa2_update_text_status: { result: 'SUCCESS' } } })),
    ).to.not.throw();
    const refused = (() => {
      try {
        mutationOutcome(answer({ errors: [{ message: 'too long', extensions: { error_code: 406 } }] }));
      } catch (err) {
        return err;
      }
    })();
    expect(whatsappErrorCode(refused)).to.equal(406);
    expect(() => mutationOutcome(answer({ data: {} }))).to.throw(/unexpected answer/);
  });
});
