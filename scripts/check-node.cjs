/**
 * Preflight of `npm test` and `npm start`: on a Node outside package.json's `engines.node`, stop
 * at once with one line saying what to install, instead of failing obscurely minutes later (mocha
 * cannot load, a service exits). Plain CommonJS in old syntax, so that any Node can run it.
 *
 * It reads the ranges `engines.node` is written in: `^X.Y.Z` (that major, from X.Y.Z) and
 * `>=X.Y.Z`, joined by `||`; anything else is an error in this script, not in the user's Node.
 * `node scripts/check-node.cjs` prints nothing and exits 0 when the running Node is supported.
 */
'use strict';

var fs = require('fs');
var path = require('path');

var ROOT = path.join(__dirname, '..');

function parse(version) {
  return String(version)
    .replace(/^v/, '')
    .split('.')
    .map(function (n) {
      return parseInt(n, 10) || 0;
    });
}

function atLeast(v, floor) {
  for (var i = 0; i < 3; i++) if ((v[i] || 0) !== (floor[i] || 0)) return (v[i] || 0) > (floor[i] || 0);
  return true;
}

/** The range's alternatives as `{ major, floor }` (`major` null for `>=`). */
function alternatives(range) {
  return range.split('||').map(function (alt) {
    var m = /^\s*(\^|>=)\s*(\d+(?:\.\d+){0,2})\s*$/.exec(alt);
    if (!m) throw new Error('scripts/check-node.cjs cannot read engines.node "' + range + '"');
    var floor = parse(m[2]);
    return { major: m[1] === '^' ? floor[0] : null, floor: floor };
  });
}

function supports(range, version) {
  var v = parse(version);
  return alternatives(range).some(function (a) {
    return (a.major === null || a.major === v[0]) && atLeast(v, a.floor);
  });
}

/** `^20.19.0 || ^22.13.0 || >=24` -> `20.19+, 22.13+ or 24+` */
function describe(range) {
  var names = alternatives(range).map(function (a) {
    var f = a.floor.slice();
    while (f.length > 1 && f[f.length - 1] === 0) f.pop();
    return f.join('.') + '+';
  });
  return names.length < 2 ? names.join('') : names.slice(0, -1).join(', ') + ' or ' + names[names.length - 1];
}

function main() {
  var range = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).engines.node;
  if (supports(range, process.versions.node)) return;
  // What CI and the image run: the one to install when in doubt.
  var pinned = fs.readFileSync(path.join(ROOT, '.node-version'), 'utf8').trim().split('.')[0];
  var install = 'install Node ' + pinned + ' LTS (https://nodejs.org, or `nvm install ' + pinned + '`)';
  var line = 'Messenger Gateway needs Node ' + describe(range) + ', this is Node ' + process.versions.node;
  process.stderr.write(line + ': ' + install + ' and run it again.\n');
  process.exit(1);
}

module.exports = { supports: supports, describe: describe };
if (require.main === module) main();
