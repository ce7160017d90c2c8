import { ConfigMap, Namespace, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import {
  PrometheusRule,
  ServiceMonitor,
} from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import type { K8sObject } from './kustomize.js';

type Model = new (data: never) => { validate(): void };

/** The schema-checked model for every kind our manifests may contain. */
const MODELS: Record<string, Model> = {
  'v1/Namespace': Namespace,
  'v1/ServiceAccount': ServiceAccount,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'networking.k8s.io/v1/Ingress': Ingress,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
};

/**
 * Validates an object against the Kubernetes (or prometheus-operator) OpenAPI schema of its kind.
 * Throws for an invalid object and for a kind with no model (it would otherwise go unchecked).
 */
export function validateObject(obj: K8sObject): void {
  const Model = MODELS[`${obj.apiVersion}/${obj.kind}`];
  if (!Model) throw new Error(`no schema model for ${obj.apiVersion} ${obj.kind} ${obj.metadata?.name}`);
  try {
    new Model(obj as never).validate();
  } catch (err) {
    throw new Error(`${obj.kind}/${obj.metadata.name}: ${(err as Error).message}`, { cause: err });
  }
}
