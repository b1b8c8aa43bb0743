// Next.js config. The UI is served by Corral's custom server (server.ts), which owns /api, /trpc, /healthz and
// /readyz; Next only sees the remaining routes. Server-only packages stay external to the bundles.
/** @type {import('next').NextConfig} */
const nextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  serverExternalPackages: ['@kubernetes/client-node'],
  typescript: { tsconfigPath: './tsconfig.json' },
};

export default nextConfig;
