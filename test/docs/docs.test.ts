import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import semver from 'semver';
import { API_ENV } from '@mgw/api/config';
import { CONNECTION_ENV } from '@mgw/connection/config';
import { NOTIFIER_ENV } from '@mgw/notifier/config';
import { SENDER_ENV } from '@mgw/sender/config';
import { EVENT_LOG_MAX_EVENTS } from '@mgw/contracts';
import { headingAnchors, links, tableVariables } from './markdown.js';

/** Debian's rabbitmqctl (its /usr/sbin one switches to the rabbitmq user when run as root). */
const RABBITMQCTL =
  ['/usr/lib/rabbitmq/bin/rabbitmqctl', '/usr/sbin/rabbitmqctl'].find((p) => existsSync(p)) ?? 'rabbitmqctl';

/**
 * The README and docs/ are read by people who cannot ask: a link that leads nowhere, or a setting
 * that is missing from (or invented in) configuration.md, is a wrong answer given in silence.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PAGES = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** Why a relative link of `page` does not resolve, or undefined when it does. */
function brokenLink(page: string, target: string): string | undefined {
  const [file, anchor] = target.split('#', 2) as [string, string | undefined];
  const resolved = file === '' ? page : path.join(path.dirname(page), decodeURIComponent(file));
  if (!existsSync(path.join(ROOT, resolved))) return `${resolved} does not exist`;
  if (anchor === undefined || !resolved.endsWith('.md')) return undefined;
  if (statSync(path.join(ROOT, resolved)).isDirectory()) return `${resolved} is a folder`;
  return headingAnchors(read(resolved)).has(anchor) ? undefined : `${resolved} has no heading #${anchor}`;
}

describe('docs', () => {
  it('When the README and docs/ are read, then every relative link and image resolves, anchors included', () => {
    const broken: string[] = [];
    let relative = 0;
    for (const page of PAGES) {
      for (const { line, target } of links(read(page))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto: — not ours to check
        relative++;
        const why = brokenLink(page, target);
        if (why) broken.push(`${page}:${line} (${target}): ${why}`);
      }
    }
    expect(broken).to.deep.equal([]);
    expect(relative, 'relative links found').to.be.greaterThan(PAGES.length);
  });

  it('When configuration.md is read, then its table lists exactly the variables the config schemas read, once each', () => {
    const schemaVariables = new Set(
      [...API_ENV, ...CONNECTION_ENV, ...SENDER_ENV, ...NOTIFIER_ENV].flatMap((p) => Object.keys(p)),
    );
    const documented = tableVariables(read('docs/configuration.md'));
    expect([...documented].sort(), 'documented variables').to.deep.equal([...schemaVariables].sort());
    expect(documented).to.have.length(new Set(documented).size);
  });

  it("When events.md is read, then the event log's bound is the fixed constant the store uses", () => {
    const events = read('docs/events.md');
    expect(events).to.include(`at most ${EVENT_LOG_MAX_EVENTS.toLocaleString('en-US')} events`);
    expect(events).to.match(/count is fixed, not a setting: `EVENT_LOG_MAX_EVENTS` is a constant/);
  });

  it('When events.md states the broker servers it was tested with, then the servers the tests start are those or newer', function () {
    // rabbitmqctl starts an Erlang VM: many seconds on a loaded machine.
    this.timeout(120_000);
    const events = read('docs/events.md');
    const stated = /Tested with RabbitMQ (\d+\.\d+\.\d+) and nats-server (\d+\.\d+\.\d+)/.exec(events);
    expect(stated, 'the tested versions, stated').to.not.equal(null);
    const nats = /v?(\d+\.\d+\.\d+)/.exec(
      execFileSync('nats-server', ['--version'], { encoding: 'utf8' }),
    )![1]!;
    const rabbit = /(\d+\.\d+\.\d+)/.exec(
      execFileSync(RABBITMQCTL, ['version'], {
        encoding: 'utf8',
        env: { ...process.env, HOME: os.tmpdir() },
      }),
    )![1]!;
    expect(semver.gte(rabbit, stated![1]!), `rabbitmq ${rabbit} >= ${stated![1]}`).to.equal(true);
    expect(semver.gte(nats, stated![2]!), `nats-server ${nats} >= ${stated![2]}`).to.equal(true);
  });

  it('When the README is counted, then it stays a ten-minute read (at most 300 lines)', () => {
    expect(read('README.md').split('\n').length).to.be.at.most(300);
  });
});
