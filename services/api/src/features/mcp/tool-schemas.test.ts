import { expect } from 'chai';
import { z } from 'zod';
import { MAX_CONTACT_CHECK } from '@mgw/contracts';
import { toolSchemas } from './tool-schemas.js';

describe("toolSchemas: the tools' arguments judged by the contracts' limits", () => {
  it('When the schemas judge arguments, then the limits of the contracts hold (recipients, numbers, a PIN, a cursor)', () => {
    const s = toolSchemas(3);
    expect(z.object(s.sendMessage).safeParse({ to: ['1', '2', '3', '4'], text: 'x' }).success).to.equal(
      false,
    );
    expect(z.object(s.sendMessage).safeParse({ to: '15550001111', text: 'x' }).success).to.equal(true);
    const phones = Array.from({ length: MAX_CONTACT_CHECK + 1 }, () => '15550001111');
    expect(z.object(s.checkNumbers).safeParse({ phones }).success).to.equal(false);
    expect(z.object(s.resolveUsername).safeParse({ username: 'alice', pin: '12' }).success).to.equal(false);
    expect(z.object(s.listMessages).safeParse({ cursor: 'abc' }).success).to.equal(false);
    expect(z.object(s.listMessages).safeParse({ cursor: '123', limit: 100 }).success).to.equal(true);
    expect(z.object(s.markChatRead).safeParse({ chatId: 'not a chat' }).success).to.equal(false);
  });
});
