import { expect } from 'chai';
import { sandboxLinkCommand } from './link-panel';

/**
 * The words a POSIX shell makes of `command`, for what sandboxLinkCommand writes: single quotes
 * (nothing inside is special), a backslash before a character (that character), a backslash before
 * a newline (nothing: the line goes on), blanks between words. Any other character a shell treats
 * specially outside quotes ($ ` " ; & | < > ( ) * ? [ # ~ and a bare newline) is refused here, so a
 * command this accepts is one the shell reads the same way.
 */
function shellWords(command: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (c === "'") {
      const end = command.indexOf("'", i + 1);
      if (end < 0) throw new Error('unterminated quote');
      word = (word ?? '') + command.slice(i + 1, end);
      i = end;
    } else if (c === '\\') {
      const next = command[++i];
      if (next === undefined) throw new Error('trailing backslash');
      if (next !== '\n') word = (word ?? '') + next;
    } else if (c === ' ' || c === '\t') {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (/[$`";&|<>()*?[#~\n]/.test(c)) {
      throw new Error(`unquoted ${JSON.stringify(c)} at ${i}`);
    } else word = (word ?? '') + c;
  }
  if (word !== undefined) words.push(word);
  return words;
}

describe('console: the sandbox link command the page shows (connection/link-panel.tsx)', () => {
  const url = 'http://127.0.0.1:4100/phone/link';
  const hostile = [
    '2@abc,def,ghi==',
    "it's; rm -rf ~ #",
    '$(id) `id` ${HOME}',
    'a\nb\r\nc\t"d"\\e',
    "'''",
    'مرحبا 👋🏽 \u202e',
    '',
  ];

  it('When the QR holds anything (quotes, $(…), backticks, newlines, Arabic, bidi marks), then the shell reads back the exact body, and runs nothing of it', () => {
    for (const qr of hostile) {
      const words = shellWords(sandboxLinkCommand(url, qr));
      expect(words.slice(0, 6), JSON.stringify(qr)).to.deep.equal(['curl', '-s', '-X', 'POST', url, '-H']);
      expect(words[6]).to.equal('content-type: application/json');
      expect(words[7]).to.equal('-d');
      expect(JSON.parse(words[8]!), JSON.stringify(qr)).to.deep.equal({
        qr,
        phone: '15550000001',
        name: 'Sandbox Account',
      });
      expect(words).to.have.length(9);
    }
  });

  it("When the simulator's address holds what a shell would read (a query's & or ;), then it is one quoted word as well", () => {
    for (const odd of ['http://127.0.0.1:4100/phone/link?a=1&b=2', "http://h/x;y'z"]) {
      const words = shellWords(sandboxLinkCommand(odd, 'qr'));
      expect(words[4]).to.equal(odd);
      expect(words).to.have.length(9);
    }
  });
});
