'use client';
// Dark by default; the choice is kept in localStorage and applied before first paint by the inline script in
// the root layout, so a light-theme user never sees a dark flash.
import { useEffect, useState } from 'react';
import { THEME_KEY } from '../lib/theme';
type Theme = 'dark' | 'light';

export function ThemeToggle() {
  const [theme, setTheme] = useState<Theme>('dark');
  useEffect(() => {
    setTheme(document.documentElement.dataset.theme === 'light' ? 'light' : 'dark');
  }, []);
  const next: Theme = theme === 'dark' ? 'light' : 'dark';
  return (
    <button
      type="button"
      className="btn-ghost"
      aria-label={`Switch to ${next} theme`}
      title={`Switch to ${next} theme`}
      data-testid="theme-toggle"
      onClick={() => {
        document.documentElement.dataset.theme = next;
        localStorage.setItem(THEME_KEY, next);
        setTheme(next);
      }}
    >
      {theme === 'dark' ? '☀' : '☾'}
    </button>
  );
}
