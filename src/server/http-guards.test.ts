import { describe, expect, it } from 'vitest';
import { crossSiteRefusal } from './http-guards';

const json = { 'content-type': 'application/json', host: 'corral:8006' };

describe('crossSiteRefusal', () => {
  it('accepts non-browser JSON requests and same-origin browser requests', () => {
    expect(crossSiteRefusal(json)).toBeUndefined();
    expect(
      crossSiteRefusal({ ...json, origin: 'http://corral:8006', 'sec-fetch-site': 'same-origin' }),
    ).toBeUndefined();
    expect(crossSiteRefusal({ ...json, 'content-type': 'application/json; charset=utf-8' })).toBeUndefined();
  });
  it('refuses cross-site and same-site fetch metadata', () => {
    expect(crossSiteRefusal({ ...json, 'sec-fetch-site': 'cross-site' })).toMatch(/cross-site/);
    expect(crossSiteRefusal({ ...json, 'sec-fetch-site': 'same-site' })).toMatch(/cross-site/);
  });
  it('refuses a foreign or opaque Origin', () => {
    expect(crossSiteRefusal({ ...json, origin: 'https://evil.example' })).toMatch(/evil\.example/);
    expect(crossSiteRefusal({ ...json, origin: 'null' })).toMatch(/opaque/);
  });
  it('refuses form posts', () => {
    expect(crossSiteRefusal({ ...json, 'content-type': 'application/x-www-form-urlencoded' })).toMatch(/JSON body/);
    expect(crossSiteRefusal({ host: 'corral:8006' })).toMatch(/JSON body/);
  });
});
