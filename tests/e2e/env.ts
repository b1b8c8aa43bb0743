// Where the Corral instances under test listen (see playwright.config.ts and serve.ts). Kept apart from the
// config so specs can import it without re-running the config's setup.
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const E2E_PORT = Number(process.env.E2E_PORT ?? 18106);
export const E2E_READONLY_PORT = E2E_PORT + 1;
/** The embedded cluster's own port, for its `/_sim/faults` control interface. */
export const E2E_SIM_PORT = E2E_PORT + 2;

/** Set to test an already running Corral instead of starting one. */
export const EXTERNAL_URL = process.env.E2E_BASE_URL;
export const BASE_URL = EXTERNAL_URL ?? `http://localhost:${E2E_PORT}`;
export const READONLY_URL =
  process.env.E2E_READONLY_URL ?? (EXTERNAL_URL ? '' : `http://localhost:${E2E_READONLY_PORT}`);
export const SIM_URL = process.env.E2E_SIM_URL ?? (EXTERNAL_URL ? '' : `http://127.0.0.1:${E2E_SIM_PORT}`);

/**
 * Where specs write their screenshots: `docs/screenshots` when asked to refresh them (`npm run screenshots`, i.e.
 * UPDATE_SCREENSHOTS=1), otherwise a scratch directory outside the checkout, so a test run leaves the tree clean.
 */
export const SCREENSHOT_DIR = process.env.UPDATE_SCREENSHOTS
  ? 'docs/screenshots'
  : join(tmpdir(), 'corral-e2e-screenshots');

/**
 * Whether this run refreshes docs/screenshots. Functional specs take their extra pictures (the other theme, phone
 * width, each in a fresh browser context) only then: every context costs seconds, and the clean-console spec already
 * checks the width-dependent pages at phone width on every run.
 */
export const REFRESHING_SCREENSHOTS = Boolean(process.env.UPDATE_SCREENSHOTS);
