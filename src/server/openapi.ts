/**
 * The OpenAPI document, generated from the procedures and post-processed (stack-notes §2): real success statuses,
 * one `Error` schema (`{"error": string}`) for every error response, no fake bearer security.
 */
import { generateOpenApiDocument } from 'trpc-to-openapi';
import { appRouter } from './routers/_app';
import { successStatusOf } from './rest';

type Json = Record<string, unknown>;

export const API_VERSION = '1.0.0';

export function buildOpenApiDocument(baseUrl = '/api'): Json {
  const doc = generateOpenApiDocument(appRouter, {
    title: 'Corral API',
    version: API_VERSION,
    baseUrl,
    description:
      'Corral: a Proxmox-style control plane for KubeVirt. Every non-2xx answer is {"error": "<message>"}: 400 invalid input, 403 read-only caller or cross-site request, 404 no such object, 409 state conflict, 501 not available, 502/503/504 cluster unreachable or failing.',
  }) as unknown as Json;
  const errorRef = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
  const paths = (doc.paths ?? {}) as Record<string, Record<string, Json>>;
  for (const ops of Object.values(paths)) {
    for (const op of Object.values(ops)) {
      const responses = (op.responses ?? {}) as Record<string, Json>;
      delete op.security;
      delete responses['401'];
      const status = successStatusOf(String(op.operationId ?? '').replace(/-/g, '.'));
      if (status !== 200 && responses['200']) {
        responses[String(status)] = responses['200'];
        delete responses['200'];
      }
      if (op.operationId === 'vms-create' && responses['201']) {
        responses['202'] = {
          description: 'bootc source: the build runs as a task',
          content: (responses['201'] as Json).content,
        };
      }
      for (const [code, r] of Object.entries(responses)) if (Number(code) >= 400) r.content = errorRef;
    }
  }
  paths['/vms/{namespace}/{name}/export'] = { get: exportOperation(errorRef) };
  paths['/datavolumes/{namespace}/{name}/upload'] = { post: uploadOperation(errorRef) };
  const components = (doc.components ?? {}) as Json;
  const schemas = (components.schemas ?? {}) as Json;
  for (const key of Object.keys(schemas)) if (key.startsWith('error.')) delete schemas[key];
  schemas.Error = { type: 'object', properties: { error: { type: 'string' } }, required: ['error'] };
  components.schemas = schemas;
  delete components.securitySchemes;
  doc.components = components;
  return doc;
}

/** A DNS-1123 label in the path (namespace, VM or DataVolume name), for the hand-described raw routes below. */
function name(n: string, description: string): Json {
  return {
    name: n,
    in: 'path',
    required: true,
    description,
    schema: { type: 'string', minLength: 1, maxLength: 63, pattern: '^[a-z0-9]([a-z0-9-]*[a-z0-9])?$' },
  };
}

/** The disk export is a raw streaming route (http/vm-export-route.ts), so it is described here by hand. */
function exportOperation(errorRef: Json): Json {
  const error = (description: string) => ({ description, content: errorRef });
  return {
    operationId: 'vms-export',
    summary: "Download the stopped VM's boot disk through a VirtualMachineExport (streamed)",
    description:
      'raw.gz (default): the raw image gzipped on the fly; qcow2: converted with qemu-img on the server (501 when ' +
      'it is missing: install qemu-utils). Admins only. Content-Disposition names the file (<vm>.img.gz, ' +
      '<vm>.qcow2). A client that disconnects stops the export; the VirtualMachineExport is deleted at the end.',
    tags: ['export'],
    parameters: [
      name('namespace', 'namespace of the VM'),
      name('name', 'the VM'),
      {
        name: 'format',
        in: 'query',
        required: false,
        schema: { type: 'string', enum: ['raw.gz', 'qcow2'], default: 'raw.gz' },
      },
      {
        name: 'context',
        in: 'query',
        required: false,
        description: 'the kube context (cluster) to act on; default: the first one Corral serves',
        schema: { type: 'string', minLength: 1, maxLength: 253 },
      },
    ],
    responses: {
      '200': {
        description: 'the disk image',
        content: {
          'application/gzip': { schema: { type: 'string', format: 'binary' } },
          'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
        },
      },
      '400': error('Invalid input data'),
      '403': error('Read-only caller or cross-site request'),
      '404': error('Not found'),
      '409': error('The VM runs, has no PVC disk, or the VMExport gate is off'),
      '501': error('qcow2 requested and qemu-img is not installed (Debian package qemu-utils)'),
      '502': error('The cluster or its export server failed'),
      '504': error('The export did not become ready in time'),
    },
  };
}

/** The image upload is a raw streaming route too (http/datavolume-upload-route.ts). */
function uploadOperation(errorRef: Json): Json {
  const error = (description: string) => ({ description, content: errorRef });
  return {
    operationId: 'datavolumes-upload',
    summary: "Upload an image (ISO or disk) into a new DataVolume through CDI's upload proxy (streamed)",
    description:
      'The body is the file itself (Content-Type application/octet-stream, Content-Length required and at most ' +
      'size). Creates the DataVolume (source upload), waits for CDI to be UploadReady, and relays the bytes with ' +
      'backpressure; answers once CDI has stored them. Admins only. A client that disconnects stops the upload: ' +
      "the DataVolume stays not Succeeded and its row's error says so.",
    tags: ['images'],
    parameters: [
      name('namespace', 'namespace of the new DataVolume'),
      name('name', 'the new DataVolume'),
      { name: 'size', in: 'query', required: true, schema: { type: 'string', example: '10Gi' } },
      {
        name: 'contentType',
        in: 'query',
        required: false,
        schema: { type: 'string', enum: ['iso', 'disk'], default: 'iso' },
      },
      {
        name: 'context',
        in: 'query',
        required: false,
        description: 'the kube context (cluster) to act on; default: the first one Corral serves',
        schema: { type: 'string', minLength: 1, maxLength: 253 },
      },
    ],
    requestBody: {
      required: true,
      content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
    },
    responses: {
      '200': {
        description: 'stored',
        content: {
          'application/json': {
            schema: {
              type: 'object',
              properties: {
                name: { type: 'string' },
                namespace: { type: 'string' },
                task: { type: 'string' },
                bytes: { type: 'integer' },
              },
              required: ['name', 'namespace', 'task', 'bytes'],
            },
          },
        },
      },
      '400': error('Invalid input data, or the file does not fit in size'),
      '403': error('Read-only caller or cross-site request'),
      '409': error('A DataVolume of that name exists'),
      '501': error('CDI publishes no upload proxy URL'),
      '502': error("The cluster or CDI's upload proxy failed"),
      '504': error('The DataVolume did not become UploadReady in time'),
    },
  };
}
