// Pictures of one screen in several looks (theme × width) for docs/screenshots, each from a fresh page that must
// log no page or console error. A functional spec looks at its screen in the page it already has; the other looks
// cost a browser context each, so they are taken only when the pictures are refreshed (`npm run screenshots`).
import { expect, type Browser, type Page } from '@playwright/test';
import { REFRESHING_SCREENSHOTS, SCREENSHOT_DIR } from './env';

export type Theme = 'dark' | 'light';
export interface Look {
  theme: Theme;
  phone: boolean;
}

export const DESKTOP = { width: 1440, height: 900 };
export const PHONE = { width: 390, height: 844 };

export const DESKTOP_LIGHT: Look = { theme: 'light', phone: false };
export const PHONE_DARK: Look = { theme: 'dark', phone: true };
export const PHONE_LIGHT: Look = { theme: 'light', phone: true };
/** Both themes at phone width: what a spec that took the desktop pictures from its own page still needs. */
export const PHONE_LOOKS: readonly Look[] = [PHONE_DARK, PHONE_LIGHT];
/** All four looks. */
export const ALL_LOOKS: readonly Look[] = [{ theme: 'dark', phone: false }, DESKTOP_LIGHT, PHONE_DARK, PHONE_LIGHT];

/** `name.png`, `name-light.png`, `name-phone.png` or `name-phone-light.png`. */
export function pictureFile(name: string, look: Look): string {
  return `${name}${look.phone ? '-phone' : ''}${look.theme === 'light' ? '-light' : ''}.png`;
}

/** Console errors and page errors the page logs from now on (a page that logs one is broken). */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  return errors;
}

export interface PictureOptions {
  /** The whole scrollable page, not only the viewport. */
  fullPage?: boolean;
  /** At phone width, fail if anything widens the page past the screen (tables must scroll inside their panel). */
  fitsPhone?: boolean;
}

/**
 * When refreshing pictures: opens a fresh page in each look (the theme stored where the app reads it before the
 * first paint; a phone's viewport and touch), lets `show` bring the screen up, checks the theme applied, takes
 * `pictureFile(name, look)` and fails on any page or console error. Otherwise does nothing.
 */
export async function pictureLooks(
  browser: Browser,
  baseURL: string | undefined,
  name: string,
  looks: readonly Look[],
  show: (page: Page, look: Look) => Promise<void>,
  options: PictureOptions = {},
): Promise<void> {
  if (!REFRESHING_SCREENSHOTS) return;
  for (const look of looks) {
    const context = await browser.newContext({
      viewport: look.phone ? PHONE : DESKTOP,
      ...(look.phone ? { isMobile: true, hasTouch: true } : {}),
      baseURL,
      colorScheme: look.theme,
    });
    try {
      const page = await context.newPage();
      const errors = watchErrors(page);
      await page.addInitScript((t) => localStorage.setItem('corral-theme', t), look.theme);
      await show(page, look);
      await expect(page.locator('html')).toHaveAttribute('data-theme', look.theme);
      if (look.phone && options.fitsPhone) {
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
      }
      await page.screenshot({ path: `${SCREENSHOT_DIR}/${pictureFile(name, look)}`, fullPage: options.fullPage });
      expect(errors, `errors on ${page.url()} (${pictureFile(name, look)})`).toEqual([]);
    } finally {
      await context.close();
    }
  }
}
