// Validates every document of a YAML file as a batch/v1 Job against the Kubernetes API schema
// (the npm package kubernetes-models, generated from Kubernetes' OpenAPI specification).
// Usage: node k8s-validate.mjs FILE   (NODE_PATH-free: run from a folder whose node_modules
// holds kubernetes-models and js-yaml). Prints "ok NAME" or "invalid NAME: WHY" per document;
// exits 1 when any is invalid.
import fs from 'fs';
import yaml from 'js-yaml';
import { Job } from 'kubernetes-models/batch/v1/Job';

const docs = yaml.loadAll(fs.readFileSync(process.argv[2], 'utf8')).filter((d) => d != null);
if (docs.length === 0) {
  console.log('invalid: no document');
  process.exitCode = 1;
}
for (const d of docs) {
  const name = d?.metadata?.name ?? '(unnamed)';
  try {
    new Job(d).validate();
    console.log(`ok ${name}`);
  } catch (e) {
    console.log(`invalid ${name}: ${e.message}`);
    process.exitCode = 1;
  }
}
