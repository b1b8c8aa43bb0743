// Catalog logos: a few simple marks drawn inline (no image downloads, works offline), a brand-coloured letter
// for other known distributions, and a letter on a colour derived from the name for anything else.

const BRAND: Record<string, string> = {
  fedora: '#294172',
  ubuntu: '#e95420',
  debian: '#a80030',
  centos: '#262577',
  opensuse: '#73ba25',
  cirros: '#5a6b7b',
  alpine: '#0d597f',
  rhel: '#ee0000',
  windows: '#0078d4',
  arch: '#1793d1',
  rocky: '#10b981',
};

function hue(name: string): number {
  let h = 0;
  for (const c of name) h = (h * 31 + c.charCodeAt(0)) % 360;
  return h;
}

function markFor(logo: string) {
  switch (logo) {
    case 'ubuntu':
      return (
        <svg viewBox="0 0 32 32" width="26" height="26" aria-hidden>
          <circle cx="16" cy="16" r="9" fill="none" stroke="#fff" strokeWidth="3" />
          <circle cx="7" cy="16" r="3.2" fill="#fff" stroke="#e95420" strokeWidth="1.5" />
          <circle cx="20.5" cy="8.2" r="3.2" fill="#fff" stroke="#e95420" strokeWidth="1.5" />
          <circle cx="20.5" cy="23.8" r="3.2" fill="#fff" stroke="#e95420" strokeWidth="1.5" />
        </svg>
      );
    case 'alpine':
      return (
        <svg viewBox="0 0 32 32" width="26" height="26" aria-hidden>
          <path d="M3 24 L12 11 L17 18 L21 13 L29 24 Z" fill="#fff" />
        </svg>
      );
    case 'fedora':
      return (
        <svg viewBox="0 0 32 32" width="26" height="26" aria-hidden>
          <circle cx="16" cy="16" r="12" fill="#3c6eb4" />
          <path
            d="M14 26 V13 a4 4 0 0 1 4-4 h3 M10 17 h9"
            stroke="#fff"
            strokeWidth="3.2"
            fill="none"
            strokeLinecap="round"
          />
        </svg>
      );
    default:
      return null;
  }
}

export function Logo({ name, logo }: { name: string; logo?: string }) {
  const key = logo ?? '';
  const background = BRAND[key] ?? `hsl(${hue(name)} 45% 40%)`;
  const mark = markFor(key);
  return (
    <span className="logo" style={{ background }} aria-hidden>
      {mark ?? (name[0] ?? '?').toUpperCase()}
    </span>
  );
}
