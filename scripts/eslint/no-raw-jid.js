/**
 * WhatsApp addresses (JIDs) are parsed, never compared as strings (docs/architecture.md): the
 * protocol writes one address more than one way — the server with or without its `@`
 * (`@s.whatsapp.net`, `s.whatsapp.net`), a device or agent part (`user:3@…`, `user.1:3@…`,
 * `user_1:3@…`), the legacy `c.us` for `s.whatsapp.net` — and a string comparison takes only the
 * spelling its author had in mind. The helpers of @mgw/contracts jid.ts (`parseJid`,
 * `isServerAddress`, `isLidAddress`, `isGroupAddress`, `sameUser`, `phoneOfJid`, …) read them all.
 *
 * Refused:
 * - `x.endsWith('@g.us')`, `startsWith`, `includes`, `indexOf`, `split('@')`, `replace(/@s\.whatsapp\.net$/, …)`,
 *   `match`, and `/@lid$/.test(x)`: a string or pattern naming a JID's server (a pattern anchored at
 *   both ends validates an input's whole format and is left alone);
 * - `x === '@s.whatsapp.net'` (or `s.whatsapp.net`, `c.us`, `status@broadcast`, `S_WHATSAPP_NET`):
 *   an equality with a JID or a server name;
 * - Baileys' suffix predicates (`isPnUser`, `isLidUser`, `isJidGroup`, `areJidsSameUser`, …),
 *   which are `endsWith` comparisons of the same kind.
 * Building an address (`${phone}@s.whatsapp.net`) is not a comparison and is left alone.
 */

const SERVERS = ['s\\.whatsapp\\.net', 'c\\.us', 'lid', 'g\\.us', 'newsletter', 'broadcast', 'hosted', 'bot'];
/** A string naming a JID's server after its `@`. */
const JID_TEXT = new RegExp(`@(${SERVERS.join('|')})\\b`);
/** A regular expression's source naming a server after `@` (its dots escaped or not). */
const JID_PATTERN = new RegExp(`@(${SERVERS.map((s) => s.replace(/\\\./g, '\\\\?\\.')).join('|')})`);
/** Equality with these is a comparison of addresses whatever the other side is. */
const EQUAL_TEXT = new RegExp(`^@?(s\\.whatsapp\\.net|c\\.us|g\\.us)$|@(${SERVERS.join('|')})$`);
const STRING_METHODS = new Set([
  'endsWith',
  'startsWith',
  'includes',
  'indexOf',
  'lastIndexOf',
  'split',
  'replace',
  'replaceAll',
  'match',
]);
const REGEX_METHODS = new Set(['test', 'exec']);
const BAILEYS_PREDICATES = new Set([
  'isPnUser',
  'isLidUser',
  'isJidUser',
  'isJidGroup',
  'isJidBroadcast',
  'isJidNewsletter',
  'isJidStatusBroadcast',
  'isHostedPnUser',
  'isHostedLidUser',
  'areJidsSameUser',
]);

const textOf = (node) => {
  if (!node) return undefined;
  if (node.type === 'Literal' && typeof node.value === 'string') return node.value;
  if (node.type === 'TemplateLiteral' && node.expressions.length === 0) return node.quasis[0].value.cooked;
  return undefined;
};
const patternOf = (node) => (node && node.type === 'Literal' && node.regex ? node.regex.pattern : undefined);
const namesJid = (node, method) => {
  if (node.type === 'Identifier' && node.name === 'S_WHATSAPP_NET') return true;
  const text = textOf(node);
  // `split('@')` takes a JID apart by hand; a bare `@` elsewhere is a username's or an e-mail's.
  if (text !== undefined) return JID_TEXT.test(text) || (method === 'split' && text === '@');
  const pattern = patternOf(node);
  return pattern !== undefined && JID_PATTERN.test(pattern);
};

/**
 * A pattern that looks for a JID's server inside a string; one anchored at both ends checks a whole
 * input's format (an API field such as a channel's `<digits>@newsletter`), which is validation, not
 * a comparison of addresses.
 */
const isJidSearch = (pattern) =>
  pattern !== undefined && JID_PATTERN.test(pattern) && !(pattern.startsWith('^') && pattern.endsWith('$'));

export function noRawJid() {
  return {
    meta: {
      type: 'problem',
      docs: { description: 'JIDs are parsed (@mgw/contracts jid.ts), never compared as strings' },
      messages: {
        method:
          '{{method}}() on a JID string: parse it instead (@mgw/contracts jid.ts: isServerAddress, isLidAddress, isGroupAddress, sameUser, phoneOfJid, …); the protocol writes one address more than one way.',
        equal:
          "Comparing with '{{text}}' as a string: parse the address instead (@mgw/contracts jid.ts: isServerAddress, sameUser, …).",
        predicate:
          "Baileys' {{name}} compares a JID's suffix as a string: use @mgw/contracts jid.ts (isPhoneAddress, isLidAddress, isGroupAddress, sameUser, …).",
      },
      schema: [],
    },
    create(context) {
      return {
        CallExpression(node) {
          const callee = node.callee;
          if (callee.type !== 'MemberExpression' || callee.computed || callee.property.type !== 'Identifier')
            return;
          const method = callee.property.name;
          if (STRING_METHODS.has(method) && node.arguments.length && namesJid(node.arguments[0], method))
            context.report({ node, messageId: 'method', data: { method } });
          else if (REGEX_METHODS.has(method) && isJidSearch(patternOf(callee.object)))
            context.report({ node, messageId: 'method', data: { method } });
        },
        BinaryExpression(node) {
          if (!['===', '!==', '==', '!='].includes(node.operator)) return;
          for (const side of [node.left, node.right]) {
            const text = textOf(side);
            if (
              (text !== undefined && EQUAL_TEXT.test(text)) ||
              (side.type === 'Identifier' && side.name === 'S_WHATSAPP_NET')
            ) {
              context.report({ node, messageId: 'equal', data: { text: text ?? side.name } });
              return;
            }
          }
        },
        ImportSpecifier(node) {
          const source = node.parent.source.value;
          const name = node.imported.type === 'Identifier' ? node.imported.name : node.imported.value;
          if (
            typeof source === 'string' &&
            source.startsWith('@whiskeysockets/baileys') &&
            BAILEYS_PREDICATES.has(name)
          )
            context.report({ node, messageId: 'predicate', data: { name } });
        },
      };
    },
  };
}
