/**
 * A planted regression for the cost budget (`BUDGET_PLANT=<iterations> npm run cost-budget`): loaded
 * into the API with `--import`, it adds a loop of that many iterations to every HTTP request the
 * process serves, so that one can see the budget fail on a known extra cost without touching the
 * API's code.
 */
import http from 'node:http';

const iterations = Number(process.env.MGW_PLANTED_ITERATIONS ?? 0);
const emit = http.Server.prototype.emit;
let sink = 0;
http.Server.prototype.emit = function (event, ...args) {
  if (event === 'request') for (let i = 0; i < iterations; i++) sink = (sink * 31 + i) | 0;
  return emit.call(this, event, ...args);
};
process.once('exit', () => {
  if (sink === 0.5) console.log(sink);
});
