import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { PVE_CONTENT_TYPE, ProxmoxError, paramError, reasonPhrase, sendData, sendError, vmNotFound } from './wire';

/** Captures what a handler writes, without a socket. */
function fakeResponse() {
  const res = Object.assign(new EventEmitter(), {
    headersSent: false,
    status: 0,
    reason: '',
    headers: {} as Record<string, unknown>,
    body: '',
    writeHead(status: number, reason: string, headers: Record<string, unknown>) {
      res.status = status;
      res.reason = reason;
      res.headers = headers;
      res.headersSent = true;
      return res;
    },
    end(chunk: string) {
      res.body = chunk;
    },
    destroy() {},
  });
  return res;
}

describe('wire', () => {
  it('wraps success in the data envelope with the exact content type', () => {
    const res = fakeResponse();
    sendData(res as unknown as ServerResponse, { version: '8.2.4' });
    expect(res.status).toBe(200);
    expect(res.headers['Content-Type']).toBe('application/json;charset=UTF-8');
    expect(PVE_CONTENT_TYPE).toBe('application/json;charset=UTF-8');
    expect(JSON.parse(res.body)).toEqual({ data: { version: '8.2.4' } });
  });

  it('renders null data for undefined', () => {
    const res = fakeResponse();
    sendData(res as unknown as ServerResponse, undefined);
    expect(res.body).toBe('{"data":null}');
  });

  it('puts the message in the reason phrase and body, with errors for parameter failures', () => {
    const res = fakeResponse();
    sendError(res as unknown as ServerResponse, paramError({ vmid: 'VM 100 already exists' }));
    expect(res.status).toBe(400);
    expect(res.reason).toBe('Parameter verification failed.');
    expect(JSON.parse(res.body)).toEqual({
      data: null,
      message: 'Parameter verification failed.\n',
      errors: { vmid: 'VM 100 already exists' },
    });
  });

  it('names the config file of an unknown VM the way bpg detects "does not exist"', () => {
    const res = fakeResponse();
    sendError(res as unknown as ServerResponse, vmNotFound('corral-1', 101));
    expect(res.status).toBe(404);
    expect(res.reason).toBe("Configuration file 'nodes/corral-1/qemu-server/101.conf' does not exist");
  });

  it('turns unexpected exceptions into 500 with their message', () => {
    const res = fakeResponse();
    sendError(res as unknown as ServerResponse, new Error('cluster unreachable'));
    expect(res.status).toBe(500);
    expect(res.reason).toBe('cluster unreachable');
    expect(res.headers['Content-Type']).toBe(PVE_CONTENT_TYPE);
  });

  it('keeps reason phrases legal for Node', () => {
    expect(reasonPhrase('line one\nline two\r\n')).toBe('line one line two');
    expect(reasonPhrase('snapshot “x” ✓')).toBe('snapshot ?x? ?');
    expect(reasonPhrase('')).toBe('error');
    expect(new ProxmoxError(403, 'x').status).toBe(403);
  });
});
