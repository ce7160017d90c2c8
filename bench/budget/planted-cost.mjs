/**
 * A planted regression for the cost budget, loaded with `--import` so that one can see the budget
 * fail on a known extra cost without touching a service's code:
 * - `MGW_PLANTED_ITERATIONS` (the API, `BUDGET_PLANT`): a loop of that many iterations on every
 *   HTTP request the process serves;
 * - `MGW_PLANTED_WRITE_ITERATIONS` (the sender, `BUDGET_PLANT_SENDER`): a loop of that many
 *   iterations on every write to a socket (its WebSocket frames and Redis commands: a fixed number
 *   per message of a kind, so the extra cost is per message too).
 */
import http from 'node:http';
import net from 'node:net';

const perRequest = Number(process.env.MGW_PLANTED_ITERATIONS ?? 0);
const perWrite = Number(process.env.MGW_PLANTED_WRITE_ITERATIONS ?? 0);
let sink = 0;
const spin = (n) => {
  for (let i = 0; i < n; i++) sink = (sink * 31 + i) | 0;
};
if (perRequest > 0) {
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (event, ...args) {
    if (event === 'request') spin(perRequest);
    return emit.call(this, event, ...args);
  };
}
if (perWrite > 0) {
  const write = net.Socket.prototype.write;
  net.Socket.prototype.write = function (...args) {
    spin(perWrite);
    return write.apply(this, args);
  };
}
process.once('exit', () => {
  if (sink === 0.5) console.log(sink);
});
