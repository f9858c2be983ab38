// node_openapi.js - the godaddy kubernetes-client against fakeapi: it builds
// its whole API from /openapi/v2 (JSON), so every call below goes through a
// path and operation the v2 document declared. Prints one "ok <what>" line
// per step; exits 1 at the first failure. Run by test_node_openapi.sh.
'use strict';
const { Client, KubeConfig } = require('kubernetes-client');
const Request = require('kubernetes-client/backends/request');

async function main() {
  const kc = new KubeConfig();
  kc.loadFromFile(process.argv[2]);
  const client = new Client({ backend: new Request({ kubeconfig: kc }) });
  await client.loadSpec();
  console.log('ok spec loaded');

  const ns = client.apis.apps.v1.namespaces('default');
  const dep = {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'nodeweb' },
    spec: {
      selector: { matchLabels: { app: 'nodeweb' } },
      template: {
        metadata: { labels: { app: 'nodeweb' } },
        spec: { containers: [{ name: 'app', image: 'nginx:1' }] },
      },
    },
  };
  const created = await ns.deployments.post({ body: dep });
  console.log('ok deployment created ' + created.statusCode);
  const list = await ns.deployments.get();
  console.log('ok deployments ' + list.body.items.map((d) => d.metadata.name).join(','));
  const patched = await ns.deployments('nodeweb').patch({ body: { spec: { replicas: 3 } } });
  console.log('ok deployment replicas ' + patched.body.spec.replicas);

  const cm = await client.api.v1.namespaces('default').configmaps.post({
    body: { metadata: { name: 'nodecm' }, data: { a: '1' } },
  });
  console.log('ok configmap created ' + cm.statusCode);

  // A CRD created after the first load shows up when the spec is loaded again
  // (the server rebuilds its cached document when the registry changes).
  if (client.apis['example.com']) throw new Error('example.com served before its CRD');
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition',
    metadata: { name: 'gadgets.example.com' },
    spec: {
      group: 'example.com', scope: 'Namespaced',
      names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
      versions: [{
        name: 'v1', served: true, storage: true,
        schema: { openAPIV3Schema: { type: 'object', properties: {
          spec: { type: 'object', properties: { speed: { type: 'integer' } } } } } },
      }],
    },
  };
  const made = await client.apis['apiextensions.k8s.io'].v1.customresourcedefinitions.post({ body: crd });
  console.log('ok crd created ' + made.statusCode);
  for (let i = 0; i < 50 && !client.apis['example.com']; i++) {
    await new Promise((r) => setTimeout(r, 100));
    await client.loadSpec();
  }
  const gadgets = client.apis['example.com'].v1.namespaces('default').gadgets;
  const g = await gadgets.post({
    body: { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g1' },
            spec: { speed: 4 } },
  });
  console.log('ok gadget created ' + g.statusCode + ' speed ' + g.body.spec.speed);
}

main().catch((e) => {
  console.log('FAILED ' + (e && e.message ? e.message : e));
  process.exit(1);
});
