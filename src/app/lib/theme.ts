/** localStorage key of the chosen theme ('dark' | 'light'); read by the pre-paint script in the root layout. */
export const THEME_KEY = 'corral-theme';
