import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { renderKustomize, type K8sObject } from './helpers/kustomize.js';
import { repoPath } from './helpers/tools.js';

interface Peer {
  namespaceSelector?: { matchLabels?: Record<string, string> };
  podSelector?: object;
  ipBlock?: object;
}
interface Policy {
  podSelector: {
    matchLabels?: Record<string, string>;
    matchExpressions?: { key: string; values?: string[] }[];
  };
  ingress?: { from?: Peer[]; ports?: { port: string | number }[] }[];
}

const COMPONENT = 'app.kubernetes.io/component';
const INGRESS_NAMESPACE = { 'kubernetes.io/metadata.name': 'ingress-nginx' };
const MONITORING_NAMESPACE = { 'kubernetes.io/metadata.name': 'monitoring' };

/** The ingress rules (sources and ports) of every policy that selects the api pods. */
function apiIngress(objs: K8sObject[]): { from?: Peer[]; ports?: { port: string | number }[] }[] {
  return objs
    .filter((o) => o.kind === 'NetworkPolicy')
    .map((o) => o.spec as unknown as Policy)
    .filter(
      (p) =>
        p.podSelector.matchLabels?.[COMPONENT] === 'api' ||
        (p.podSelector.matchExpressions ?? []).some((e) => e.key === COMPONENT && e.values?.includes('api')),
    )
    .flatMap((p) => p.ingress ?? []);
}

const trustProxy = (objs: K8sObject[]) =>
  objs.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('messenger-gateway-config'))!.data!
    .TRUST_PROXY;

describe('Kubernetes: who may reach the API', () => {
  let production: K8sObject[];
  let sandbox: K8sObject[];
  before(async () => {
    [production, sandbox] = await Promise.all([
      renderKustomize({ dir: 'k8s/overlays/production' }),
      renderKustomize({ dir: 'k8s/overlays/sandbox' }),
    ]);
  });

  it('When TRUST_PROXY is on (production), then only the ingress controller namespace reaches api:http, and only Prometheus its metrics port', () => {
    expect(trustProxy(production)).to.equal('1');
    const rules = apiIngress(production);
    expect(rules.length).to.be.greaterThan(0);
    for (const rule of rules) {
      expect(rule.from, 'every rule names its sources').to.be.an('array').that.is.not.empty;
      const ports = (rule.ports ?? []).map((p) => p.port);
      const namespaces = rule.from!.map((f) => f.namespaceSelector?.matchLabels);
      for (const peer of rule.from!) expect(peer.ipBlock, 'no address range').to.equal(undefined);
      if (ports.includes('http')) expect(namespaces).to.deep.equal([INGRESS_NAMESPACE]);
      else
        expect({ ports, namespaces }).to.deep.equal({
          ports: ['metrics'],
          namespaces: [MONITORING_NAMESPACE],
        });
    }
    expect(rules.some((r) => (r.ports ?? []).some((p) => p.port === 'http'))).to.equal(true);
  });

  it('When TRUST_PROXY is off (sandbox), then the API stays reachable as before (no proxy is trusted)', () => {
    expect(['false', '0', undefined]).to.include(trustProxy(sandbox));
    expect(
      apiIngress(sandbox).some((r) => !r.from && (r.ports ?? []).some((p) => p.port === 'http')),
    ).to.equal(true);
  });

  it('When the production overlay is read, then the ingress namespace is the one documented, patchable value', () => {
    const file = readFileSync(repoPath('k8s/overlays/production/api-network-policy.yaml'), 'utf8');
    const guide = readFileSync(repoPath('docs/operations.md'), 'utf8');
    expect(file).to.include('kubernetes.io/metadata.name: ingress-nginx');
    expect(guide).to.include('k8s/overlays/production/api-network-policy.yaml');
    expect(guide).to.include('kubernetes.io/metadata.name: ingress-nginx');
  });
});
