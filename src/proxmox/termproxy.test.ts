import { describe, expect, it } from 'vitest';
import { TermFrameDecoder } from './termproxy';

const push = (d: TermFrameDecoder, s: string | Buffer) => d.push(typeof s === 'string' ? Buffer.from(s, 'utf8') : s);
const text = (frames: ReturnType<TermFrameDecoder['push']>) =>
  frames.map((f) =>
    f.kind === 'data' ? `data:${f.data.toString('utf8')}` : f.kind === 'resize' ? `resize:${f.cols}x${f.rows}` : 'ping',
  );

describe('TermFrameDecoder (PVE termproxy client frames)', () => {
  it('decodes data, resize and ping frames packed into one message', () => {
    expect(text(push(new TermFrameDecoder(), '0:5:root\n1:80:24:20:3:ls\n'))).toEqual([
      'data:root\n',
      'resize:80x24',
      'ping',
      'data:ls\n',
    ]);
  });

  it('counts LEN in bytes, so multi-byte UTF-8 input is not cut', () => {
    expect(text(push(new TermFrameDecoder(), '0:4:é\n\n'))).toEqual(['data:é\n\n']);
  });

  it('data may contain colons and digits', () => {
    expect(text(push(new TermFrameDecoder(), '0:7:1:2:3:\n'))).toEqual(['data:1:2:3:\n']);
  });

  it('reassembles frames split across messages at any byte', () => {
    const whole = '0:8:hostname1:132:43:20:1:\n';
    for (let cut = 1; cut < whole.length; cut++) {
      const d = new TermFrameDecoder();
      const frames = [...push(d, whole.slice(0, cut)), ...push(d, whole.slice(cut))];
      expect(text(frames)).toEqual(['data:hostname', 'resize:132x43', 'ping', 'data:\n']);
    }
  });

  it('rejects bytes that are no termproxy frame', () => {
    expect(() => push(new TermFrameDecoder(), 'hostname\n')).toThrow(/frame type "h"/);
    expect(() => push(new TermFrameDecoder(), '0:x:a')).toThrow(/length "x"/);
    expect(() => push(new TermFrameDecoder(), '0;')).toThrow(/expected ":"/);
    expect(() => push(new TermFrameDecoder(), '1:80x24:')).toThrow(/resize frame/);
  });
});
