import type { Metadata, Viewport } from 'next';
import { headers } from 'next/headers';
import type { ReactNode } from 'react';
import { Shell } from './components/Shell';
import { nonceFromPolicy } from './lib/csp';
import { FIRST_SCREEN_HEADER, firstScreenFor } from './lib/first-screen';
import { earlyPrefillScript } from './lib/prefill';
import { THEME_KEY } from './lib/theme';
import { Providers } from './providers';
import './globals.css';

export const metadata: Metadata = {
  title: 'Corral',
  description: 'A Proxmox-style workbench for KubeVirt',
};

export const viewport: Viewport = { width: 'device-width', initialScale: 1, colorScheme: 'dark light' };

// Runs before first paint so a stored light theme never flashes dark.
const themeScript = `try{var t=localStorage.getItem(${JSON.stringify(THEME_KEY)});if(t==='light'||t==='dark')document.documentElement.dataset.theme=t}catch(e){}`;

// Reading the request's headers makes every page dynamically rendered: the CSP nonce is new on each response
// (src/server/http/security-headers.ts), and a prerendered page's inline scripts could not carry it.
export default async function RootLayout({ children }: { children: ReactNode }) {
  const request = await headers();
  const nonce = nonceFromPolicy(request.get('content-security-policy'));
  // On the Datacenter the server renders the first rows itself (lib/first-screen.ts): no first-page request then.
  const seed = firstScreenFor(request.get(FIRST_SCREEN_HEADER));
  return (
    <html lang="en" data-theme="dark" suppressHydrationWarning>
      <head>
        <script nonce={nonce} dangerouslySetInnerHTML={{ __html: themeScript }} />
        {/* Starts the fleet's REST prefill while the page's scripts are still loading. */}
        {!seed && <script nonce={nonce} dangerouslySetInnerHTML={{ __html: earlyPrefillScript(true) }} />}
      </head>
      <body>
        <Providers seed={seed}>
          <Shell>{children}</Shell>
        </Providers>
        {/* With the first rows in the HTML, the lists are asked for once the parser has passed them: on a slow
            link the megabytes of the whole list then do not queue ahead of the rest of this document. */}
        {seed && <script nonce={nonce} dangerouslySetInnerHTML={{ __html: earlyPrefillScript(false) }} />}
      </body>
    </html>
  );
}
