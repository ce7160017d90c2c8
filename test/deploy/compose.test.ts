import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { parse } from 'yaml';
import { npmBin, repoPath, runTool, type ToolResult } from './helpers/tools.js';
import { nodeArgsOf } from '@mgw/testing/node-args';
import { SEND_POLICY_ENV } from '@mgw/store';
import { CLOUD_WEBHOOK_PATH } from '@mgw/contracts';
import { loadApiConfig } from '@mgw/api/config';
import { loadSenderConfig } from '@mgw/sender/config';

interface ComposeService {
  build?: unknown;
  image?: string;
  command?: string[];
  environment?: Record<string, unknown>;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  profiles?: string[];
  deploy?: { replicas?: number };
  stop_grace_period?: string;
  volumes?: string[];
  ports?: string[];
}
interface ComposeFile {
  services: Record<string, ComposeService>;
}

/** Compose durations such as "40s", "1m30s" in seconds. */
function seconds(duration: string | undefined): number {
  if (!duration) return 10;
  let total = 0;
  for (const [, n, unit] of duration.matchAll(/(\d+)(h|m|s)/g))
    total += Number(n) * { h: 3600, m: 60, s: 1 }[unit!]!;
  return total;
}

const GATEWAY = ['api', 'connection', 'sender'];

describe('docker-compose.yml and the Dockerfile', () => {
  let lint: ToolResult;
  const compose = parse(readFileSync(repoPath('docker-compose.yml'), 'utf8'), { merge: true }) as ComposeFile;
  const services = compose.services;

  before(async () => {
    lint = await runTool(npmBin('dclint'), ['--max-warnings', '0', '-f', 'json', 'docker-compose.yml']);
  });

  it('When dclint lints the compose file, then it reports no error and no warning', () => {
    expect(lint.code, lint.output).to.equal(0);
    const [report] = JSON.parse(lint.stdout) as Array<{ errorCount: number; warningCount: number }>;
    expect(report, lint.output).to.include({ errorCount: 0, warningCount: 0 });
  });

  it('When compose starts Redis, then it runs Redis 7 with AOF and noeviction, on a volume', () => {
    const redis = services.redis!;
    expect(redis.image).to.match(/^redis:7/);
    const args = redis.command!.join(' ');
    expect(args).to.match(/--appendonly yes/);
    expect(args).to.match(/--maxmemory-policy noeviction/);
    expect(redis.volumes).to.include('redis-data:/data');
  });

  it('When the gateway services start, then each runs node on its entry point after Redis is healthy', () => {
    const entry: Record<string, string> = {
      api: 'services/api/dist/main.js',
      connection: 'services/connection/dist/main.js',
      sender: 'services/sender/dist/main.js',
      sandbox: 'libs/messenger-sim/dist/cli.js',
      'cloud-sandbox': 'libs/cloud-sim/dist/cli.js',
    };
    for (const [name, main] of Object.entries(entry)) {
      const svc = services[name]!;
      expect(svc.build, `${name} builds the Dockerfile`).to.deep.equal({
        context: '.',
        dockerfile: 'Dockerfile',
      });
      expect(svc.command, name).to.deep.equal(['node', main]);
      // The Node options npm start and the test stack give the service (libs/testing/node-args.mjs).
      const nodeOptions = String(
        (svc.environment as Record<string, unknown> | undefined)?.NODE_OPTIONS ?? '',
      );
      for (const arg of nodeArgsOf(name))
        expect(nodeOptions.split(' '), `${name} NODE_OPTIONS`).to.include(arg);
      // the TypeScript source the entry point is compiled from exists
      expect(existsSync(repoPath(main.replace('/dist/', '/src/').replace(/\.js$/, '.ts'))), main).to.equal(
        true,
      );
    }
    for (const name of GATEWAY) {
      expect(services[name]!.depends_on, name).to.deep.include({
        redis: { condition: 'service_healthy', restart: true },
      });
      expect(services[name]!.environment?.REDIS_URL, name).to.match(/redis:\/\/redis:6379/);
      // required: compose refuses to start without it, saying how to make one
      expect(services[name]!.environment?.MGW_ENCRYPTION_KEY, name).to.match(
        /^\$\{MGW_ENCRYPTION_KEY:\?.*keys -- generate.*\}$/,
      );
      expect(services[name]!.environment, name).to.have.property('MGW_ENCRYPTION_OLD_KEYS', null);
      // Settings the API and the senders both read: one value for all, from the shell or .env.
      for (const key of [
        'MESSAGE_RETENTION_SECONDS',
        'ALLOWED_PRIVATE_HOSTS',
        ...Object.keys(SEND_POLICY_ENV),
      ]) {
        expect(services[name]!.environment, `${name} ${key}`).to.have.property(key, null);
      }
    }
    for (const name of GATEWAY) {
      expect(services[name]!.depends_on, name).to.deep.include({
        sandbox: { condition: 'service_healthy', required: false },
        'cloud-sandbox': { condition: 'service_healthy', required: false },
      });
    }
  });

  it('When every service is read, then each has a healthcheck, and node healthchecks use fetch on the right port', () => {
    for (const [name, svc] of Object.entries(services)) {
      expect(svc.healthcheck?.test, `${name} healthcheck`).to.be.an('array').that.is.not.empty;
    }
    const port: Record<string, number> = {
      api: 3000,
      connection: 9464,
      sender: 9464,
      sandbox: 3100,
      'cloud-sandbox': 3101,
    };
    for (const [name, p] of Object.entries(port)) {
      const test = services[name]!.healthcheck!.test;
      expect(test.slice(0, 3), name).to.deep.equal(['CMD', 'node', '-e']);
      expect(test[3], name).to.include(`fetch('http://127.0.0.1:${p}/`);
      expect(() => new Function(test[3]!), `${name} healthcheck is valid JavaScript`).to.not.throw();
    }
    expect(services.grafana!.depends_on).to.deep.equal({ prometheus: { condition: 'service_healthy' } });
  });

  it('When the API is read, then /metrics has its own port, not published, that Prometheus scrapes', () => {
    const api = services.api!;
    expect(Number(api.environment?.METRICS_PORT)).to.equal(9464);
    expect((api.ports ?? []).join(' ')).to.not.include('9464');
    const prometheus = parse(readFileSync(repoPath('deploy/prometheus/prometheus.yml'), 'utf8')) as {
      scrape_configs: Array<{ job_name: string; dns_sd_configs: Array<{ port: number }> }>;
    };
    const job = prometheus.scrape_configs.find((j) => j.job_name === 'api');
    expect(job?.dns_sd_configs[0]?.port).to.equal(9464);
  });

  it('When the stack stops, then the grace periods cover the drain: sender ≥ 35 s, api and connection ≥ 30 s', () => {
    expect(seconds(services.sender!.stop_grace_period)).to.be.at.least(35);
    expect(Number(services.sender!.environment?.SHUTDOWN_TIMEOUT_MS) / 1000).to.be.below(
      seconds(services.sender!.stop_grace_period),
    );
    expect(seconds(services.api!.stop_grace_period)).to.be.at.least(30);
    expect(seconds(services.connection!.stop_grace_period)).to.be.at.least(30);
  });

  it('When profiles are read, then two senders run by default, the simulators are in "sandbox" and monitoring in "monitoring"', () => {
    expect(services.sender!.deploy?.replicas).to.equal(2);
    for (const name of [...GATEWAY, 'redis']) expect(services[name]!.profiles, name).to.equal(undefined);
    expect(services.sandbox!.profiles).to.deep.equal(['sandbox']);
    expect(services['cloud-sandbox']!.profiles).to.deep.equal(['sandbox']);
    expect(services.sandbox!.environment).to.include({
      SANDBOX_HOST: '0.0.0.0',
      SANDBOX_PUBLIC_HOST: 'sandbox',
    });
    expect(services.prometheus!.profiles).to.deep.equal(['monitoring']);
    expect(services.grafana!.profiles).to.deep.equal(['monitoring']);
    expect(services.prometheus!.volumes).to.include(
      './deploy/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro',
    );
    expect(services.grafana!.volumes).to.include(
      './deploy/grafana/provisioning:/etc/grafana/provisioning:ro',
    );
    // only the sandbox profile sets it (from the shell): an empty value would fail config validation
    expect(services.api!.environment).to.have.property('MESSENGER_SANDBOX_URL', null);
  });

  it("When the sandbox profile runs, then the API and the senders reach the Cloud API simulator by its service name in sandbox mode only, and its webhooks reach the API's endpoint", () => {
    const sim = services['cloud-sandbox']!;
    const env = sim.environment as Record<string, unknown>;
    expect(env).to.include({ CLOUD_SANDBOX_HOST: '0.0.0.0' });
    // Published on this machine only, like the other simulator's control API.
    expect(sim.ports).to.deep.equal([`127.0.0.1:\${CLOUD_SANDBOX_PORT:-3101}:${env.CLOUD_SANDBOX_PORT}`]);
    const callback = new URL(String(env.CLOUD_SANDBOX_CALLBACK_URL));
    expect(callback.hostname, 'the api service, by its name on the compose network').to.equal('api');
    expect(callback.port).to.equal(String(services.api!.environment?.PORT));
    expect(callback.pathname).to.equal(CLOUD_WEBHOOK_PATH);
    // Passed through from the shell or .env, as the sandbox profile's command sets them.
    for (const name of ['api', 'sender']) {
      expect(services[name]!.environment, name).to.have.property('CLOUD_GRAPH_URL', null);
      expect(services[name]!.environment, name).to.have.property('CLOUD_GRAPH_TIMEOUT_MS', null);
    }
    // What the services make of the profile's values (the header's command, docs/operations.md):
    // the simulator's private host is allowed because sandbox mode is on, and never without it.
    const graphUrl = `http://cloud-sandbox:${env.CLOUD_SANDBOX_PORT}`;
    const secrets = {
      REDIS_URL: 'redis://redis:6379/0',
      MGW_ENCRYPTION_KEY: `k1:${randomBytes(32).toString('base64')}`,
    };
    const cloud = { ...secrets, CLOUD_GRAPH_URL: graphUrl };
    const sandbox = { ...cloud, MESSENGER_SANDBOX_URL: 'http://sandbox:3100' };
    for (const load of [loadApiConfig, loadSenderConfig]) {
      const on = load(sandbox).cloud;
      expect(on.graphUrl, load.name).to.equal(graphUrl);
      expect(on.allowList.allowsHost('cloud-sandbox'), load.name).to.equal(true);
      expect(
        load(cloud).cloud.allowList.allowsHost('cloud-sandbox'),
        `${load.name} outside sandbox mode`,
      ).to.equal(false);
      expect(load(secrets).cloud.allowList.entries, `${load.name}: by default nothing private`).to.be.empty;
    }
  });

  it('When the Dockerfile is read, then it is multi-stage, runs as non-root, execs node directly and has a node healthcheck', () => {
    const dockerfile = readFileSync(repoPath('Dockerfile'), 'utf8');
    const instructions = dockerfile
      .replace(/\\\n/g, ' ')
      .split('\n')
      .filter((l) => l.trim() && !l.trim().startsWith('#'));
    expect(instructions.filter((l) => /^FROM /.test(l)).length).to.be.at.least(2);
    expect(dockerfile).to.match(/npm prune --omit=dev/);
    const user = instructions.filter((l) => /^USER /.test(l)).at(-1);
    expect(user).to.match(/^USER (?!root|0\b)\S+/);
    const cmd = instructions.filter((l) => /^CMD /.test(l)).at(-1)!;
    expect(JSON.parse(cmd.slice(4))[0]).to.equal('node');
    const health = instructions.find((l) => /^HEALTHCHECK /.test(l));
    expect(health).to.match(/CMD \["node", "-e", .*fetch\(/);
    expect(health).to.not.match(/curl|wget/);
  });

  it("When the image is built with a SERVICE, then each choice is a built entry point, a typo's message lists them all, and the simulators go by their compose names", () => {
    const dockerfile = readFileSync(repoPath('Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
    const [, arms] = /RUN case "\$SERVICE" in (.*?) esac/.exec(dockerfile)!;
    const targets = new Map<string, string>();
    for (const [, labels, target] of arms!.matchAll(/([\w|-]+)\) target="([^"]+)" ;;/g))
      for (const label of labels!.split('|')) targets.set(label, target!.replace('$SERVICE', label));
    const listed = /unknown SERVICE '\$SERVICE' \(([^)]*)\)/.exec(arms!)![1]!.split(', ');
    expect(listed, 'the message on a typo names every choice').to.have.members([...targets.keys()]);
    expect([...targets.keys()]).to.include.members(['api', 'sandbox', 'cloud-sandbox']);
    for (const [label, target] of targets) {
      const source = repoPath(target.replace('/dist/', '/src/').replace(/\.js$/, '.ts'));
      expect(existsSync(source), `${label}: ${target} is compiled from a source`).to.equal(true);
      // the same process as compose's service of that name (all-in-one has none)
      if (services[label]) expect(services[label].command, label).to.deep.equal(['node', target]);
    }
  });

  it("When the image runs a service by any command, then its NODE_OPTIONS carry the sender's Node options", () => {
    // Whoever runs the image with their own command (no compose, no k8s) still gets the sender's
    // young-generation bound; the runtime stage's ENV is what every command inherits.
    const instructions = readFileSync(repoPath('Dockerfile'), 'utf8')
      .replace(/\\\n/g, ' ')
      .split('\n')
      .filter((l) => l.trim() && !l.trim().startsWith('#'));
    const runtime = instructions.slice(instructions.findLastIndex((l) => /^FROM /.test(l)));
    const env = runtime.filter((l) => /^ENV /.test(l)).join(' ');
    const nodeOptions = /\bNODE_OPTIONS=(\S+|"[^"]*")/.exec(env)?.[1]?.replace(/"/g, '') ?? '';
    expect(nodeArgsOf('sender'), 'the sender has Node options').to.not.be.empty;
    for (const arg of nodeArgsOf('sender'))
      expect(nodeOptions.split(' '), 'image NODE_OPTIONS').to.include(arg);
  });

  it('When .dockerignore filters the build context, then sources and build config go in and node_modules, dist and tests stay out', () => {
    const patterns = readFileSync(repoPath('.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    expect(
      patterns.filter((p) => p.startsWith('!')),
      'no re-includes (this check ignores them)',
    ).to.be.empty;
    // Docker matches each pattern (Go filepath.Match plus "**") against the path and its parents.
    const toRegExp = (p: string) =>
      new RegExp(
        '^' +
          p
            .replace(/[.+^${}()|[\]\\]/g, '\\$&')
            .replace(/\*\*\//g, '\0')
            .replace(/\*/g, '[^/]*')
            .replace(/\0/g, '(?:.*/)?') +
          '(?:/.*)?$',
      );
    const ignored = (file: string) => patterns.some((p) => toRegExp(p).test(file));
    const dockerfile = readFileSync(repoPath('Dockerfile'), 'utf8');
    const copied = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1]!.split(/\s+/));
    expect(copied).to.include.members(['package.json', 'package-lock.json', 'libs', 'services']);
    for (const src of copied) {
      expect(existsSync(repoPath(src)), `${src} exists`).to.equal(true);
      expect(ignored(src), `${src} is not ignored`).to.equal(false);
    }
    for (const needed of [
      'tsconfig.base.json',
      'lerna.json',
      'libs/common/package.json',
      'libs/common/tsconfig.build.json',
      'libs/common/src/metrics.ts',
      'libs/messenger-sim/src/cli.ts',
      'services/sender/src/main.ts',
    ]) {
      expect(ignored(needed), `${needed} reaches the build`).to.equal(false);
    }
    for (const excluded of [
      'node_modules/yaml/package.json',
      'libs/common/node_modules/x',
      'libs/common/dist/index.js',
      'services/api/test/app.test.ts',
      // Tests beside their code, and the end-to-end ones of a capability.
      'services/api/src/features/labels/create-label.test.ts',
      'services/api/src/features/labels/e2e/labels.test.ts',
      '.git/HEAD',
      '.env',
      'k8s/base/kustomization.yaml',
    ]) {
      expect(ignored(excluded), `${excluded} stays out`).to.equal(true);
    }
  });

  it('When the image HEALTHCHECK runs, then it passes if either health port answers 200 and fails otherwise', async () => {
    const dockerfile = readFileSync(repoPath('Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
    const [, json] = /^HEALTHCHECK .*?CMD (\[.*\])$/m.exec(dockerfile)!;
    const args = JSON.parse(json!) as string[];
    const serve = async (status: number) => {
      const server = http.createServer((req, res) =>
        res.writeHead(req.url === '/healthz' ? status : 404).end(),
      );
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return { server, port: (server.address() as AddressInfo).port };
    };
    const free = await serve(200);
    const unused = free.port;
    await new Promise<void>((resolve) => free.server.close(() => resolve()));
    const healthy = await serve(200);
    const failing = await serve(503);
    try {
      const check = (env: Record<string, number>) =>
        runTool(process.execPath, args.slice(1), {
          env: Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)])),
        });
      expect((await check({ PORT: healthy.port, METRICS_PORT: unused })).code, 'api port').to.equal(0);
      expect((await check({ PORT: unused, METRICS_PORT: healthy.port })).code, 'metrics port').to.equal(0);
      expect((await check({ PORT: failing.port, METRICS_PORT: unused })).code, '503').to.equal(1);
      expect((await check({ PORT: unused, METRICS_PORT: unused })).code, 'nothing listening').to.equal(1);
    } finally {
      healthy.server.close();
      failing.server.close();
    }
  });
});
