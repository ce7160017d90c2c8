import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { parse } from 'yaml';
import { tracingWanted } from '@mgw/common';
import { validateObject } from './helpers/k8s-models.js';
import { renderKustomize, type K8sObject } from './helpers/kustomize.js';
import { repoPath } from './helpers/tools.js';

const SERVICES = ['api', 'connection', 'sender', 'notifier'];
const NAMESPACE = 'messenger-gateway';

interface PodSpec {
  containers: Array<{ envFrom?: Array<{ configMapRef?: { name: string } }> }>;
}

/** Each service Deployment's environment from its ConfigMaps (what `envFrom` gives it). */
function configEnv(objs: K8sObject[]): Map<string, Record<string, string>> {
  const maps = new Map(
    objs.filter((o) => o.kind === 'ConfigMap').map((o) => [o.metadata.name, o.data ?? {}]),
  );
  const out = new Map<string, Record<string, string>>();
  for (const d of objs.filter((o) => o.kind === 'Deployment' && SERVICES.includes(o.metadata.name))) {
    const pod = (d.spec as { template: { spec: PodSpec } }).template.spec;
    const env: Record<string, string> = {};
    for (const c of pod.containers)
      for (const from of c.envFrom ?? []) Object.assign(env, maps.get(from.configMapRef?.name ?? '') ?? {});
    out.set(d.metadata.name, env);
  }
  return out;
}

describe('Kubernetes and compose: OpenTelemetry traces, off by default (k8s/components/tracing)', () => {
  it('When production is rendered as shipped, then no service has an OTLP endpoint: tracing is off', async () => {
    const env = configEnv(await renderKustomize({ dir: 'k8s/overlays/production' }));
    expect([...env.keys()]).to.have.members(SERVICES);
    for (const [name, vars] of env) expect(tracingWanted(vars), name).to.equal(false);
  });

  it('When the tracing component is added, then every service exports to the collector over OTLP/HTTP with a parent-based sampler, and may reach it', async () => {
    const objs = await renderKustomize({
      dir: 'k8s/overlays/production',
      namespace: NAMESPACE,
      components: ['k8s/components/tracing'],
    });
    for (const obj of objs) validateObject(obj);
    const env = configEnv(objs);
    expect([...env.keys()]).to.have.members(SERVICES);
    for (const [name, vars] of env) {
      expect(tracingWanted(vars), name).to.equal(true);
      expect(vars.OTEL_EXPORTER_OTLP_ENDPOINT, name).to.match(/^http:\/\/[^/]+:4318$/);
      expect(vars.OTEL_EXPORTER_OTLP_PROTOCOL, name).to.equal('http/protobuf');
      expect(vars.OTEL_TRACES_SAMPLER, name).to.match(/^parentbased_/);
      // Each service names itself (mgw-<service>): one name for all would merge them.
      expect(vars.OTEL_SERVICE_NAME, name).to.equal(undefined);
      expect(vars.OTEL_RECORD_RECIPIENTS, name).to.equal('false');
      // The rest of the configuration is kept (merged, not replaced).
      expect(vars.SEND_MIN_GAP_MS, name).to.equal('1000');
    }
    const egress = objs.find((o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'gateway-egress-otlp')!;
    const ports = JSON.stringify(egress.spec);
    expect(ports).to.include('4318');
  });

  it('When compose is read, then every service passes the OTEL_ variables through when set, and has none otherwise (off)', () => {
    const compose = parse(readFileSync(repoPath('docker-compose.yml'), 'utf8'), { merge: true }) as {
      services: Record<string, { environment?: Record<string, string | null> }>;
    };
    for (const name of SERVICES) {
      const env = compose.services[name]!.environment!;
      for (const v of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_TRACES_SAMPLER'])
        expect(env, `${name} ${v}`).to.have.property(v, null);
      expect(env, name).not.to.have.property('OTEL_SERVICE_NAME');
    }
  });
});
