import { describe, expect, it } from 'vitest';
import { parsePveHosts } from './config';

const TOKEN = 'root@pam!corral=0b7c9e2a-5f1d-4c33-9d7e-1f2a3b4c5d6e';

describe('parsePveHosts (--pve NAME=URL)', () => {
  it('reads the token from CORRAL_PVE_<NAME>_TOKEN and keeps the base URL', () => {
    expect(
      parsePveHosts(['pve-1=https://pve1.lan:8006/'], {
        CORRAL_PVE_PVE_1_TOKEN: TOKEN,
        CORRAL_PVE_PVE_1_INSECURE: '1',
      }),
    ).toEqual([{ name: 'pve-1', url: 'https://pve1.lan:8006', token: TOKEN, insecure: true }]);
  });

  it('takes the header form of the token too', () => {
    expect(parsePveHosts(['a=http://h:8006'], { CORRAL_PVE_A_TOKEN: `PVEAPIToken=${TOKEN}` })[0]?.token).toBe(TOKEN);
  });

  it.each([
    [['pve1'], {}, /expected NAME=URL/],
    [['PVE=https://h'], {}, /lower-case/],
    [['a=ftp://h'], { CORRAL_PVE_A_TOKEN: TOKEN }, /must be http\(s\)/],
    [['a=not a url'], {}, /is not a URL/],
    [['a=https://h:8006/api2/json'], { CORRAL_PVE_A_TOKEN: TOKEN }, /base URL only/],
    [['a=https://h'], {}, /set CORRAL_PVE_A_TOKEN/],
    [['a=https://h'], { CORRAL_PVE_A_TOKEN: 'secret-only' }, /user@realm!tokenid=secret/],
    [['a=https://h'], { CORRAL_PVE_A_TOKEN: TOKEN, CORRAL_PVE_A_INSECURE: 'yes' }, /expected 1 or 0/],
    [['a=https://h'], { CORRAL_PVE_A_TOKEN_FILE: '/nonexistent/token' }, /CORRAL_PVE_A_TOKEN_FILE: cannot read/],
    [['a=https://h'], { CORRAL_PVE_A_TOKEN: TOKEN, CORRAL_PVE_A_CA: '/nonexistent/ca.pem' }, /CORRAL_PVE_A_CA/],
    [['a=https://h', 'a=https://g'], { CORRAL_PVE_A_TOKEN: TOKEN }, /named twice/],
  ])('refuses %j with a message naming the option', (values, env, message) => {
    expect(() => parsePveHosts(values, env)).toThrow(message);
  });
});
