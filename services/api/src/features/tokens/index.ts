/** What other features use of the tokens capability: how a token is shown (never its value). */
export { tokenView, type TokenView } from './tokens.js';
