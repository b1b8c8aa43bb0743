import { describe, expect, it } from 'vitest';
import { consoleUrl } from '../components/console/console-link';
import { contextOfSearch, ctPageHref, nodePageHref, vmPageHref, vmRef, withContext } from './cluster-links';

describe('cluster links', () => {
  it("keep the default cluster's URLs as they were and add ?context= for another cluster", () => {
    const home = { namespace: 'tailvm', name: 'web', context: 'home' };
    const lab = { namespace: 'tailvm', name: 'web', context: 'lab' };
    expect(vmPageHref(home, 'home')).toBe('/vms/tailvm/web');
    expect(vmPageHref(lab, 'home')).toBe('/vms/tailvm/web?context=lab');
    expect(vmPageHref(lab, 'home', 'console')).toBe('/vms/tailvm/web?tab=console&context=lab');
    expect(ctPageHref(lab, 'home', 'summary')).toBe('/cts/tailvm/web?tab=summary&context=lab');
    expect(nodePageHref({ name: 'n1', context: 'lab' }, 'home')).toBe('/nodes/n1?context=lab');
    // One cluster: no default context is known and no URL carries one.
    expect(vmPageHref(lab, '')).toBe('/vms/tailvm/web');
    expect(withContext('/x', 'a b', 'home')).toBe('/x?context=a%20b');
  });

  it('name the row’s cluster in calls and read it back from a page URL', () => {
    expect(vmRef({ namespace: 'n', name: 'v', context: 'lab' })).toEqual({ namespace: 'n', name: 'v', context: 'lab' });
    expect(vmRef({ namespace: 'n', name: 'v' })).toEqual({ namespace: 'n', name: 'v' });
    expect(contextOfSearch(new URLSearchParams('tab=summary&context=lab'))).toBe('lab');
    expect(contextOfSearch(new URLSearchParams('context='))).toBeUndefined();
    expect(consoleUrl({ protocol: 'http:', host: 'h:1' }, 'vnc', 'n', 'v', { context: 'lab', watch: true })).toBe(
      'ws://h:1/api/vnc/n/v?watch=1&context=lab',
    );
  });
});
