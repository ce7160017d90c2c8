import { existsSync, readFileSync } from 'node:fs';
import { expect } from 'chai';
import { parse } from 'yaml';
import { API_ENV, loadApiConfig } from '@mgw/api/config';
import { CONNECTION_ENV, loadConnectionConfig } from '@mgw/connection/config';
import { SENDER_ENV, loadSenderConfig } from '@mgw/sender/config';
import { validateObject } from './helpers/k8s-models.js';
import { renderKustomize, type K8sObject } from './helpers/kustomize.js';
import { repoPath } from './helpers/tools.js';
import { nodeArgsOf } from '@mgw/testing/node-args';
import { SEND_POLICY_ENV } from '@mgw/store';
import { CLOUD_WEBHOOK_PATH } from '@mgw/contracts';

// ---- the parts of the schemas these assertions read ----
interface Probe {
  httpGet?: { path: string; port: string | number };
  tcpSocket?: { port: string | number };
  exec?: { command: string[] };
}
interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    configMapKeyRef?: { name: string; key: string; optional?: boolean };
    secretKeyRef?: { name: string; key: string; optional?: boolean };
  };
}
interface Container {
  name: string;
  image: string;
  command?: string[];
  ports?: Array<{ name?: string; containerPort: number }>;
  env?: EnvVar[];
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>;
  startupProbe?: Probe;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] }; sleep?: { seconds: number } } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: {
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    privileged?: boolean;
    runAsUser?: number;
    capabilities?: { drop?: string[]; add?: string[] };
  };
  volumeMounts?: Array<{ name: string; mountPath: string }>;
}
interface PodSpec {
  containers: Container[];
  terminationGracePeriodSeconds?: number;
  automountServiceAccountToken?: boolean;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; seccompProfile?: { type: string } };
  volumes?: Array<{ name: string; emptyDir?: object; configMap?: { name: string } }>;
}
interface WorkloadSpec {
  replicas?: number;
  selector: { matchLabels: Record<string, string> };
  template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  volumeClaimTemplates?: unknown[];
}
interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}
interface NetworkPolicySpec {
  podSelector: LabelSelector;
  policyTypes: string[];
  ingress?: Array<{
    from?: Array<{ podSelector?: LabelSelector; namespaceSelector?: LabelSelector; ipBlock?: object }>;
  }>;
  egress?: Array<{
    to?: Array<{ podSelector?: LabelSelector; ipBlock?: { cidr: string } }>;
    ports?: Array<{ port: number | string }>;
  }>;
}

const GATEWAY = ['api', 'connection', 'sender'] as const;
const COMPONENT = 'app.kubernetes.io/component';
const PRESTOP_SECONDS = 5;

const workloads = (objs: K8sObject[]) =>
  objs.filter((o) => o.kind === 'Deployment' || o.kind === 'StatefulSet');
const specOf = <T>(o: K8sObject) => o.spec as unknown as T;
const find = (objs: K8sObject[], kind: string, name: string) =>
  objs.find((o) => o.kind === kind && o.metadata.name === name);
const firstContainer = (w: K8sObject) => specOf<WorkloadSpec>(w).template.spec.containers[0]!;
const workload = (objs: K8sObject[], name: string) => {
  const w = find(objs, 'Deployment', name) ?? find(objs, 'StatefulSet', name);
  if (!w) throw new Error(`no workload ${name}`);
  return specOf<WorkloadSpec>(w);
};

function matches(selector: LabelSelector, labels: Record<string, string>): boolean {
  const byLabels = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const byExpr = (selector.matchExpressions ?? []).every((e) => {
    if (e.operator === 'In') return e.values!.includes(labels[e.key] ?? '\0');
    if (e.operator === 'NotIn') return !e.values!.includes(labels[e.key] ?? '\0');
    if (e.operator === 'Exists') return e.key in labels;
    return !(e.key in labels);
  });
  return byLabels && byExpr;
}

/**
 * Whether the network policies let a pod labelled `from` open a connection to a pod labelled `to`
 * in its namespace: an egress rule of the one and an ingress rule of the other both allow it.
 */
function mayConnect(policies: NetworkPolicySpec[], from: Record<string, string>, to: Record<string, string>) {
  const egress = policies
    .filter((p) => p.policyTypes.includes('Egress') && matches(p.podSelector, from))
    .flatMap((p) => p.egress ?? [])
    .some((r) => !r.to || r.to.some((t) => t.podSelector && matches(t.podSelector, to)));
  const ingress = policies
    .filter((p) => p.policyTypes.includes('Ingress') && matches(p.podSelector, to))
    .flatMap((p) => p.ingress ?? [])
    .some((r) => !r.from || r.from.some((f) => f.podSelector && matches(f.podSelector, from)));
  return egress && ingress;
}

/** The ConfigMap data a container sees through envFrom, by ConfigMap name. */
function configMaps(objs: K8sObject[]): Map<string, Record<string, string>> {
  return new Map(objs.filter((o) => o.kind === 'ConfigMap').map((o) => [o.metadata.name, o.data ?? {}]));
}

function envOf(objs: K8sObject[], c: Container): Record<string, string> {
  const cms = configMaps(objs);
  const env: Record<string, string> = {};
  for (const from of c.envFrom ?? []) Object.assign(env, cms.get(from.configMapRef?.name ?? '') ?? {});
  for (const e of c.env ?? []) if (e.value !== undefined) env[e.name] = e.value;
  return env;
}

/** The settings every gateway Deployment reads (its name carries a content hash). */
const gatewayConfigMap = (objs: K8sObject[]) =>
  objs.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('messenger-gateway-config'))!;

const secretTemplate = parse(readFileSync(repoPath('k8s/base/secret.yaml'), 'utf8')) as K8sObject;

const RENDERS = {
  production: { dir: 'k8s/overlays/production', components: [] as string[] },
  sandbox: { dir: 'k8s/overlays/sandbox', components: [] as string[] },
  // as if added to the production overlay's `components:` (which sets the namespace)
  'production + monitoring + external-redis': {
    dir: 'k8s/overlays/production',
    namespace: 'messenger-gateway',
    components: ['k8s/components/monitoring', 'k8s/components/external-redis'],
  },
  'production + external-redis + redis-sentinel': {
    dir: 'k8s/overlays/production',
    namespace: 'messenger-gateway',
    components: ['k8s/components/external-redis', 'k8s/components/redis-sentinel'],
  },
};
type RenderName = keyof typeof RENDERS;

describe('Kubernetes manifests (kustomize overlays and components)', () => {
  const rendered = {} as Record<RenderName, K8sObject[]>;

  before(async () => {
    const names = Object.keys(RENDERS) as RenderName[];
    const outputs = await Promise.all(names.map((n) => renderKustomize(RENDERS[n])));
    names.forEach((n, i) => (rendered[n] = outputs[i]!));
  });

  const each = (fn: (objs: K8sObject[], name: RenderName) => void) => () => {
    for (const name of Object.keys(RENDERS) as RenderName[]) fn(rendered[name], name);
  };

  it(
    'When each overlay is rendered, then every object validates against its Kubernetes or prometheus-operator schema',
    each((objs, name) => {
      expect(objs.length, name).to.be.greaterThan(10);
      for (const obj of objs) validateObject(obj);
    }),
  );

  it('When an object breaks its schema, then the validator rejects it', () => {
    const good = find(rendered.production, 'Deployment', 'sender')!;
    const bad = structuredClone(good);
    (specOf<WorkloadSpec>(bad).template.spec.containers[0] as unknown as { ports: unknown }).ports = [
      { containerPort: 'nine' },
    ];
    expect(() => validateObject(good)).to.not.throw();
    expect(() => validateObject(bad)).to.throw(/containerPort/);
    expect(() => validateObject({ ...good, kind: 'CronTab' })).to.throw(/no schema model/);
  });

  it(
    'When each overlay is rendered, then everything lives in its restricted namespace',
    each((objs, name) => {
      const [ns, ...others] = objs.filter((o) => o.kind === 'Namespace');
      expect(others, name).to.be.empty;
      expect(ns!.metadata.labels).to.include({ 'pod-security.kubernetes.io/enforce': 'restricted' });
      for (const o of objs.filter((x) => x.kind !== 'Namespace')) {
        expect(o.metadata.namespace, `${name} ${o.kind}/${o.metadata.name}`).to.equal(ns!.metadata.name);
      }
    }),
  );

  it(
    'When the pods are read, then each runs under the restricted security profile with a writable /tmp only',
    each((objs, name) => {
      for (const w of workloads(objs)) {
        const pod = specOf<WorkloadSpec>(w).template.spec;
        const where = `${name} ${w.metadata.name}`;
        expect(pod.securityContext?.runAsNonRoot, where).to.equal(true);
        expect(pod.securityContext?.runAsUser, where).to.be.greaterThan(0);
        expect(pod.securityContext?.seccompProfile?.type, where).to.equal('RuntimeDefault');
        expect(pod.automountServiceAccountToken, where).to.equal(false);
        for (const c of pod.containers) {
          expect(c.securityContext, where).to.deep.include({
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
          });
          expect(c.securityContext?.privileged, where).to.not.equal(true);
          expect(c.securityContext?.capabilities?.drop, where).to.include('ALL');
          expect(c.securityContext?.capabilities?.add ?? [], where).to.be.empty;
          const tmp = c.volumeMounts?.find((m) => m.mountPath === '/tmp');
          expect(pod.volumes?.find((v) => v.name === tmp?.name)?.emptyDir, `${where} /tmp emptyDir`).to.be.an(
            'object',
          );
          expect(c.image, where)
            .to.match(/:[\w.-]+$/)
            .and.not.match(/:latest$/);
        }
      }
    }),
  );

  it(
    'When the containers are read, then each has startup, liveness and readiness probes on ports it declares, and requests and limits',
    each((objs, name) => {
      for (const w of workloads(objs)) {
        for (const c of specOf<WorkloadSpec>(w).template.spec.containers) {
          const where = `${name} ${w.metadata.name}/${c.name}`;
          for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe'] as const) {
            const p = c[probe];
            expect(p, `${where} ${probe}`).to.be.an('object');
            const port = p!.httpGet?.port ?? p!.tcpSocket?.port;
            if (port === undefined) expect(p!.exec?.command, `${where} ${probe}`).to.not.be.empty;
            else if (typeof port === 'string')
              expect(
                c.ports?.map((x) => x.name),
                `${where} ${probe}`,
              ).to.include(port);
            else
              expect(
                c.ports?.map((x) => x.containerPort),
                `${where} ${probe}`,
              ).to.include(port);
          }
          for (const kind of ['requests', 'limits'] as const) {
            expect(c.resources?.[kind], `${where} ${kind}`).to.have.all.keys('cpu', 'memory');
          }
        }
      }
    }),
  );

  it(
    'When the gateway pods are read, then they probe /healthz, /readyz and run node on their entry point',
    each((objs, name) => {
      for (const svc of GATEWAY) {
        const [c] = workload(objs, svc).template.spec.containers;
        const port = svc === 'api' ? 'http' : 'metrics';
        expect(c!.ports?.find((p) => p.name === port)?.containerPort, `${name} ${svc}`).to.equal(
          svc === 'api' ? 3000 : 9464,
        );
        expect(c!.startupProbe?.httpGet, `${name} ${svc}`).to.deep.equal({ path: '/healthz', port });
        expect(c!.livenessProbe?.httpGet, `${name} ${svc}`).to.deep.equal({ path: '/healthz', port });
        expect(c!.readinessProbe?.httpGet, `${name} ${svc}`).to.deep.equal({ path: '/readyz', port });
        const main = `services/${svc}/dist/main.js`;
        expect(c!.command).to.deep.equal(['node', main]);
        expect(existsSync(repoPath(`services/${svc}/src/main.ts`)), main).to.equal(true);
        const env = envOf(objs, c!);
        // The Node options npm start and the test stack give the service (libs/testing/node-args.mjs).
        for (const arg of nodeArgsOf(svc))
          expect(env.NODE_OPTIONS?.split(' '), `${name} ${svc} NODE_OPTIONS`).to.include(arg);
        expect(Number(env[svc === 'api' ? 'PORT' : 'METRICS_PORT']), `${name} ${svc} port env`).to.equal(
          svc === 'api' ? 3000 : 9464,
        );
        // /metrics is on every service's ops port, the API's included (not on its public port).
        expect(c!.ports?.find((p) => p.name === 'metrics')?.containerPort, `${name} ${svc} metrics`).to.equal(
          9464,
        );
        expect(Number(env.METRICS_PORT), `${name} ${svc} METRICS_PORT`).to.equal(9464);
      }
    }),
  );

  it(
    'When a gateway pod is stopped, then a preStop pause runs and the grace period covers it plus the drain',
    each((objs, name) => {
      for (const svc of GATEWAY) {
        const pod = workload(objs, svc).template.spec;
        const c = pod.containers[0]!;
        expect(c.lifecycle?.preStop?.exec?.command, `${name} ${svc}`).to.deep.equal([
          'node',
          '-e',
          `setTimeout(() => {}, ${PRESTOP_SECONDS * 1000})`,
        ]);
        expect(() => new Function(c.lifecycle!.preStop!.exec!.command[2]!)).to.not.throw();
        const drain = Number(envOf(objs, c).SHUTDOWN_TIMEOUT_MS) / 1000;
        expect(drain, `${name} ${svc} SHUTDOWN_TIMEOUT_MS`).to.be.greaterThan(0);
        expect(pod.terminationGracePeriodSeconds, `${name} ${svc}`).to.be.at.least(
          PRESTOP_SECONDS + drain + 5,
        );
      }
      const sender = workload(objs, 'sender').template.spec;
      expect(Number(envOf(objs, sender.containers[0]!).SHUTDOWN_TIMEOUT_MS)).to.be.at.least(30_000);
    }),
  );

  it(
    'When selectors are read, then workloads, Services, PDBs and the HPA all point at existing pods and ports',
    each((objs, name) => {
      for (const w of workloads(objs)) {
        const spec = specOf<WorkloadSpec>(w);
        expect(
          matches(spec.selector, spec.template.metadata.labels),
          `${name} ${w.metadata.name} selector`,
        ).to.equal(true);
      }
      const pods = workloads(objs).map((w) => specOf<WorkloadSpec>(w).template);
      for (const s of objs.filter((o) => o.kind === 'Service')) {
        const spec = specOf<{
          selector: Record<string, string>;
          ports: Array<{ name: string; targetPort: string | number }>;
        }>(s);
        const targets = pods.filter((p) => matches({ matchLabels: spec.selector }, p.metadata.labels));
        expect(targets, `${name} Service ${s.metadata.name} selects pods`).to.have.length(1);
        const ports = targets[0]!.spec.containers.flatMap((c) => c.ports ?? []);
        for (const p of spec.ports) {
          const ok = ports.some((cp) => cp.name === p.targetPort || cp.containerPort === p.targetPort);
          expect(ok, `${name} Service ${s.metadata.name} targetPort ${p.targetPort}`).to.equal(true);
        }
      }
      const pdbs = objs.filter((o) => o.kind === 'PodDisruptionBudget');
      for (const svc of GATEWAY) {
        const labels = workload(objs, svc).template.metadata.labels;
        const pdb = pdbs.filter((p) => matches(specOf<{ selector: LabelSelector }>(p).selector, labels));
        expect(pdb, `${name} PDB for ${svc}`).to.have.length(1);
      }
      const hpas = objs.filter((o) => o.kind === 'HorizontalPodAutoscaler');
      expect(
        hpas.map((h) => specOf<{ scaleTargetRef: { kind: string; name: string } }>(h).scaleTargetRef),
      ).to.deep.equal([{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'api' }]);
      expect(workload(objs, 'api').replicas, 'the HPA owns the api replica count').to.equal(undefined);
      expect(workload(objs, 'sender').replicas).to.be.at.least(2);
    }),
  );

  it(
    'When containers reference ConfigMaps and Secrets, then every name and key exists (Secret keys in the template)',
    each((objs, name) => {
      const cms = configMaps(objs);
      const templateKeys = Object.keys(secretTemplate.stringData ?? {});
      const secrets = objs.filter((o) => o.kind === 'Secret');
      expect(secrets.length, `${name} secrets`).to.be.at.most(1);
      for (const s of secrets) {
        expect(s.metadata.name).to.equal(secretTemplate.metadata.name);
        expect(Object.keys({ ...s.data, ...s.stringData })).to.have.members(templateKeys);
      }
      for (const w of workloads(objs)) {
        const pod = specOf<WorkloadSpec>(w).template.spec;
        for (const v of pod.volumes ?? []) {
          if (v.configMap)
            expect(cms.has(v.configMap.name), `${name} volume ConfigMap ${v.configMap.name}`).to.equal(true);
        }
        for (const c of pod.containers) {
          const where = `${name} ${w.metadata.name}/${c.name}`;
          for (const from of c.envFrom ?? []) {
            if (from.configMapRef)
              expect(cms.has(from.configMapRef.name), `${where} envFrom ${from.configMapRef.name}`).to.equal(
                true,
              );
            if (from.secretRef) expect(from.secretRef.name, where).to.equal(secretTemplate.metadata.name);
          }
          for (const e of c.env ?? []) {
            const cmRef = e.valueFrom?.configMapKeyRef;
            if (cmRef) expect(cms.get(cmRef.name), `${where} ${e.name}`).to.have.property(cmRef.key);
            const secretRef = e.valueFrom?.secretKeyRef;
            if (secretRef) {
              expect(secretRef.name, `${where} ${e.name}`).to.equal(secretTemplate.metadata.name);
              expect(templateKeys, `${where} ${e.name}`).to.include(secretRef.key);
            }
          }
        }
      }
    }),
  );

  it(
    'When the gateway ConfigMap is read, then every key is a setting of a service and every service accepts the values',
    each((objs, name) => {
      const cm = gatewayConfigMap(objs);
      const settings = new Set([...API_ENV, ...CONNECTION_ENV, ...SENDER_ENV].flatMap((p) => Object.keys(p)));
      for (const key of Object.keys(cm.data!)) {
        expect(settings.has(key), `${name}: ${key} is not a setting`).to.equal(true);
      }
      // what the pods get from the Secret (the template's values are valid, placeholders as they are)
      const env = { ...cm.data, ...secretTemplate.stringData };
      for (const load of [loadApiConfig, loadConnectionConfig, loadSenderConfig]) {
        expect(() => load(env), `${name}: ${load.name}`).to.not.throw();
      }
      const gatewayEnv = Object.fromEntries(
        GATEWAY.map((svc) => [svc, workload(objs, svc).template.spec.containers[0]!.env ?? []]),
      );
      for (const [svc, env] of Object.entries(gatewayEnv)) {
        for (const secret of ['REDIS_URL', 'MGW_ENCRYPTION_KEY', 'MGW_ENCRYPTION_OLD_KEYS']) {
          expect(
            env.find((e) => e.name === secret)?.valueFrom?.secretKeyRef?.key,
            `${name} ${svc} ${secret}`,
          ).to.equal(secret);
        }
        // a pod without the key would not start; only the rotation list (and the admin API's
        // automation token) may be absent
        const optional = env.filter((e) => e.valueFrom?.secretKeyRef?.optional).map((e) => e.name);
        // (and, behind Sentinel, the sentinels' password: they may have none)
        const sentinel = name.includes('redis-sentinel') ? ['REDIS_SENTINEL_PASSWORD'] : [];
        expect(optional, `${name} ${svc}`).to.deep.equal(
          svc === 'api'
            ? ['MGW_ENCRYPTION_OLD_KEYS', 'ADMIN_API_TOKEN', ...sentinel]
            : ['MGW_ENCRYPTION_OLD_KEYS', ...sentinel],
        );
        if (svc === 'api') {
          expect(env.find((e) => e.name === 'ADMIN_PASSWORD')?.valueFrom?.secretKeyRef?.key).to.equal(
            'ADMIN_PASSWORD',
          );
        }
      }
    }),
  );

  it(
    'When a setting is read by both the API and the senders (retention, sending policy), then it is in the shared ConfigMap with the built-in default',
    each((objs, name) => {
      const cm = gatewayConfigMap(objs);
      for (const key of ['MESSAGE_RETENTION_SECONDS', ...Object.keys(SEND_POLICY_ENV)]) {
        expect(cm.data, `${name}: ${key}`).to.have.property(key);
      }
      // The manifest states the defaults: the services read the same policy with or without it.
      const secrets = secretTemplate.stringData as Record<string, string>;
      const withMap = {
        api: loadApiConfig({ ...cm.data, ...secrets }),
        sender: loadSenderConfig({ ...cm.data, ...secrets }),
      };
      const builtIn = { api: loadApiConfig({ ...secrets }), sender: loadSenderConfig({ ...secrets }) };
      for (const svc of ['api', 'sender'] as const) {
        expect(withMap[svc].sendPolicy, `${name} ${svc}`).to.deep.equal(builtIn[svc].sendPolicy);
        expect(withMap[svc].store.messageRetentionSeconds, `${name} ${svc}`).to.equal(
          builtIn[svc].store.messageRetentionSeconds,
        );
      }
      // and no Deployment sets one of them on its own (it would differ from the others')
      for (const svc of GATEWAY) {
        const own = (workload(objs, svc).template.spec.containers[0]!.env ?? []).map((e) => e.name);
        expect(
          own.filter((n) => n === 'MESSAGE_RETENTION_SECONDS' || n.startsWith('SEND_')),
          `${name} ${svc}`,
        ).to.be.empty;
      }
    }),
  );

  it(
    'When the network policies are read, then all is denied by default and only the api accepts traffic from anywhere, and only without TRUST_PROXY',
    each((objs, name) => {
      const policies = objs
        .filter((o) => o.kind === 'NetworkPolicy')
        .map((o) => specOf<NetworkPolicySpec>(o));
      const denyAll = policies.find(
        (p) =>
          Object.keys(p.podSelector).length === 0 && !p.ingress && !p.egress && p.policyTypes.length === 2,
      );
      expect(denyAll, `${name} default deny`).to.not.equal(undefined);
      for (const w of workloads(objs)) {
        const labels = specOf<WorkloadSpec>(w).template.metadata.labels;
        const open = policies
          .filter((p) => matches(p.podSelector, labels))
          .flatMap((p) => p.ingress ?? [])
          .some((rule) => !rule.from || rule.from.some((f) => f.ipBlock));
        const behindProxy = !['', 'false', '0'].includes(envOf(objs, firstContainer(w)).TRUST_PROXY ?? '');
        expect(open, `${name} ${w.metadata.name} open to anywhere`).to.equal(
          labels[COMPONENT] === 'api' && !behindProxy,
        );
      }
    }),
  );

  it('When Redis is bundled, then it is a StatefulSet with a volume, AOF and noeviction, reachable only from the services', () => {
    for (const name of ['production', 'sandbox'] as const) {
      const objs = rendered[name];
      const redis = workload(objs, 'redis');
      expect(redis.volumeClaimTemplates, name).to.have.length(1);
      const confName = redis.template.spec.volumes!.find((v) => v.configMap)!.configMap!.name;
      const conf = configMaps(objs).get(confName)!['redis.conf']!;
      expect(conf)
        .to.match(/^appendonly yes$/m)
        .and.match(/^maxmemory-policy noeviction$/m)
        // one connection per linked account: above Redis's default 10,000
        .and.match(/^maxclients [1-9]\d{4,}$/m);
      const policies = objs
        .filter((o) => o.kind === 'NetworkPolicy')
        .map((o) => specOf<NetworkPolicySpec>(o));
      const sources = policies
        .filter((p) => matches(p.podSelector, redis.template.metadata.labels))
        .flatMap((p) => p.ingress ?? [])
        .flatMap((r) => r.from ?? [{}]);
      expect(sources, name).to.have.length.greaterThan(0);
      for (const s of sources) {
        expect(s.namespaceSelector ?? s.ipBlock, `${name}: redis open beyond the namespace`).to.equal(
          undefined,
        );
        const allowed = ['api', 'connection', 'sender', 'redis', 'sandbox', 'cloud-sandbox'].filter((c) =>
          matches(s.podSelector ?? {}, { [COMPONENT]: c, 'app.kubernetes.io/name': 'messenger-gateway' }),
        );
        expect(allowed, name).to.have.members([...GATEWAY]);
      }
    }
  });

  it('When the production overlay is rendered, then it applies no Secret, points at a registry image and has no sandbox', () => {
    const objs = rendered.production;
    expect(objs.filter((o) => o.kind === 'Secret')).to.be.empty;
    expect(workload(objs, 'sender').template.spec.containers[0]!.image).to.match(
      /^registry\.example\.com\/messenger-gateway:/,
    );
    expect(find(objs, 'Deployment', 'sandbox')).to.equal(undefined);
    expect(find(objs, 'Deployment', 'cloud-sandbox')).to.equal(undefined);
    const cm = gatewayConfigMap(objs);
    expect(cm.data).to.not.have.property('MESSENGER_SANDBOX_URL');
    // Meta's Graph API, and no private host let through for it
    const cloud = loadApiConfig({ ...cm.data, ...secretTemplate.stringData }).cloud;
    expect(cloud.graphUrl).to.equal('https://graph.facebook.com');
    expect(cloud.allowList.entries).to.be.empty;
    expect(find(objs, 'Ingress', 'api')).to.not.equal(undefined);
    // The API reaches the Graph API (a cloud device's checks, templates, media): HTTPS to public
    // addresses, never the cluster's private ranges.
    const policies = objs.filter((o) => o.kind === 'NetworkPolicy').map((o) => specOf<NetworkPolicySpec>(o));
    const publicHttps = (component: string) =>
      policies
        .filter((p) => p.policyTypes.includes('Egress') && matches(p.podSelector, { [COMPONENT]: component }))
        .flatMap((p) => p.egress ?? [])
        .filter((r) => (r.ports ?? []).some((port) => port.port === 443))
        .flatMap((r) => r.to ?? [])
        .map((t) => t.ipBlock as { cidr: string; except?: string[] } | undefined)
        .filter((b) => b?.cidr === '0.0.0.0/0');
    for (const component of ['api', 'sender']) {
      const blocks = publicHttps(component);
      expect(blocks, `${component} -> public 443`).to.have.length.greaterThan(0);
      for (const b of blocks)
        expect(b!.except, component).to.include.members(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16']);
    }
  });

  it('When the sandbox overlay is rendered, then the simulator runs and the services are pointed at it and may reach it', () => {
    const objs = rendered.sandbox;
    const sim = workload(objs, 'sandbox');
    const [c] = sim.template.spec.containers;
    expect(c!.command).to.deep.equal(['node', 'libs/messenger-sim/dist/cli.js']);
    expect(envOf(objs, c!)).to.include({
      SANDBOX_PORT: '3100',
      SANDBOX_HOST: '0.0.0.0',
      SANDBOX_PUBLIC_HOST: 'sandbox',
    });
    const svc = specOf<{ clusterIP: string; ports: Array<{ port: number }> }>(
      find(objs, 'Service', 'sandbox')!,
    );
    expect(svc.ports.map((p) => p.port)).to.include(3100);
    const sandboxUrl = new URL(
      envOf(objs, workload(objs, 'sender').template.spec.containers[0]!).MESSENGER_SANDBOX_URL!,
    );
    expect(sandboxUrl.hostname).to.equal('sandbox');
    expect(Number(sandboxUrl.port)).to.equal(3100);
    const policies = objs.filter((o) => o.kind === 'NetworkPolicy').map((o) => specOf<NetworkPolicySpec>(o));
    for (const from of ['connection', 'sender']) {
      const labels = workload(objs, from).template.metadata.labels;
      expect(mayConnect(policies, labels, sim.template.metadata.labels), `${from} -> sandbox`).to.equal(true);
    }
  });

  it('When the sandbox overlay is rendered, then the Cloud API simulator runs, the API and the senders reach it in sandbox mode, and its webhooks reach the API', () => {
    const objs = rendered.sandbox;
    const sim = workload(objs, 'cloud-sandbox');
    const [c] = sim.template.spec.containers;
    expect(c!.command).to.deep.equal(['node', 'libs/cloud-sim/dist/cli.js']);
    const env = envOf(objs, c!);
    expect(env).to.include({ CLOUD_SANDBOX_PORT: '3101', CLOUD_SANDBOX_HOST: '0.0.0.0' });
    const servicePort = (name: string, port: number) =>
      specOf<{ ports: Array<{ port: number; targetPort: string | number }> }>(
        find(objs, 'Service', name)!,
      ).ports.find((p) => p.port === port);
    const containerPort = (w: WorkloadSpec, target: string | number | undefined) =>
      w.template.spec.containers[0]!.ports?.find((p) => p.name === target || p.containerPort === target)
        ?.containerPort;
    // The Graph URL the API and the senders get: the simulator's Service, onto its port.
    const cm = gatewayConfigMap(objs).data!;
    const graph = new URL(cm.CLOUD_GRAPH_URL!);
    expect(graph.hostname).to.equal('cloud-sandbox');
    expect(containerPort(sim, servicePort('cloud-sandbox', Number(graph.port))?.targetPort)).to.equal(
      Number(env.CLOUD_SANDBOX_PORT),
    );
    // What the services make of it: the simulator's host allowed, because sandbox mode is on.
    const settings = { ...cm, ...secretTemplate.stringData };
    for (const load of [loadApiConfig, loadSenderConfig]) {
      expect(load(settings).cloud.allowList.allowsHost('cloud-sandbox'), load.name).to.equal(true);
      expect(
        load({ ...settings, MESSENGER_SANDBOX_URL: undefined }).cloud.allowList.allowsHost('cloud-sandbox'),
        `${load.name} outside sandbox mode`,
      ).to.equal(false);
    }
    // Its webhooks: the api Service, onto the API's own port, at Meta's endpoint.
    const callback = new URL(env.CLOUD_SANDBOX_CALLBACK_URL!);
    expect(callback.hostname).to.equal('api');
    const api = workload(objs, 'api');
    expect(containerPort(api, servicePort('api', Number(callback.port || 80))?.targetPort)).to.equal(
      Number(cm.PORT),
    );
    expect(callback.pathname).to.equal(CLOUD_WEBHOOK_PATH);
    const policies = objs.filter((o) => o.kind === 'NetworkPolicy').map((o) => specOf<NetworkPolicySpec>(o));
    const labels = (name: string) => workload(objs, name).template.metadata.labels;
    for (const from of ['api', 'sender'])
      expect(
        mayConnect(policies, labels(from), labels('cloud-sandbox')),
        `${from} -> cloud-sandbox`,
      ).to.equal(true);
    expect(mayConnect(policies, labels('cloud-sandbox'), labels('api')), 'cloud-sandbox -> api').to.equal(
      true,
    );
    // and nothing else: not Redis, not the notifier or connection service
    for (const other of ['redis', 'connection', 'notifier'])
      expect(
        mayConnect(policies, labels('cloud-sandbox'), labels(other)),
        `cloud-sandbox -> ${other}`,
      ).to.equal(false);
  });

  it('When the monitoring component is added, then the ServiceMonitor scrapes every service on its metrics port and the PrometheusRule equals the rules file', () => {
    const objs = rendered['production + monitoring + external-redis'];
    const sm = specOf<{ selector: LabelSelector; endpoints: Array<{ port: string; path: string }> }>(
      find(objs, 'ServiceMonitor', 'messenger-gateway')!,
    );
    for (const svc of GATEWAY) {
      const service = find(objs, 'Service', svc)!;
      expect(matches(sm.selector, service.metadata.labels ?? {}), `ServiceMonitor selects ${svc}`).to.equal(
        true,
      );
      const portNames = specOf<{ ports: Array<{ name: string }> }>(service).ports.map((p) => p.name);
      expect(
        sm.endpoints.some((e) => portNames.includes(e.port) && e.path === '/metrics'),
        svc,
      ).to.equal(true);
    }
    expect(
      sm.endpoints.map((e) => e.port),
      'never the public port',
    ).to.deep.equal(['metrics']);
    const rule = specOf<{ groups: unknown }>(find(objs, 'PrometheusRule', 'messenger-gateway')!);
    const file = parse(readFileSync(repoPath('deploy/prometheus/rules/messenger-gateway.yml'), 'utf8')) as {
      groups: unknown;
    };
    expect(rule.groups).to.deep.equal(file.groups);
  });

  it('When the external-redis component is added, then no Redis runs in the cluster and the services may reach port 6379 outside', () => {
    const objs = rendered['production + monitoring + external-redis'];
    expect(find(objs, 'StatefulSet', 'redis')).to.equal(undefined);
    expect(find(objs, 'Service', 'redis')).to.equal(undefined);
    expect(objs.filter((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('redis-config'))).to.be
      .empty;
    const policies = objs.filter((o) => o.kind === 'NetworkPolicy').map((o) => specOf<NetworkPolicySpec>(o));
    for (const svc of GATEWAY) {
      const labels = workload(objs, svc).template.metadata.labels;
      const egress = policies
        .filter((p) => matches(p.podSelector, labels))
        .flatMap((p) => p.egress ?? [])
        .some((r) => (r.ports ?? []).some((p) => p.port === 6379) && (r.to ?? []).some((t) => t.ipBlock));
      expect(egress, `${svc} -> external redis`).to.equal(true);
    }
  });

  it('When the redis-sentinel component is added, then every service finds the master through the sentinels, with their password from the Secret, and may reach them', () => {
    const objs = rendered['production + external-redis + redis-sentinel'];
    expect(find(objs, 'StatefulSet', 'redis')).to.equal(undefined);
    const cm = gatewayConfigMap(objs).data!;
    expect(cm.REDIS_SENTINEL_MASTER).to.equal('mymaster');
    const secrets = { ...secretTemplate.stringData, REDIS_URL: 'redis://:pw@unused:6379/0' };
    // The settings load: three sentinels, the master name, the data nodes' password from the URL.
    expect(loadSenderConfig({ ...cm, ...secrets }).redis.sentinel?.sentinels).to.have.length(3);
    const policies = objs.filter((o) => o.kind === 'NetworkPolicy').map((o) => specOf<NetworkPolicySpec>(o));
    for (const svc of [...GATEWAY, 'notifier']) {
      const c = workload(objs, svc).template.spec.containers[0]!;
      const pw = c.env?.find((e) => e.name === 'REDIS_SENTINEL_PASSWORD');
      expect(pw?.valueFrom?.secretKeyRef, svc).to.deep.equal({
        name: 'messenger-gateway-secrets',
        key: 'REDIS_SENTINEL_PASSWORD',
        optional: true,
      });
      const labels = workload(objs, svc).template.metadata.labels;
      const egress = policies
        .filter((p) => matches(p.podSelector, labels))
        .flatMap((p) => p.egress ?? [])
        .flatMap((r) => (r.ports ?? []).map((p) => p.port));
      expect(egress, `${svc} -> sentinels and data nodes`).to.include.members([26379, 6379]);
    }
  });
});
