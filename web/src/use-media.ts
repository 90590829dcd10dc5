import { useEffect, useState } from 'react';

/**
 * Whether a media query matches, kept current as the window is resized. A change counts only once
 * it has held for a moment: a passing flip (a full-page screenshot resizes the viewport for an
 * instant) would otherwise move a pending request between the timeline and the sheet, and a
 * half-typed answer would be lost with the unmounted form.
 */
export function useMedia(query: string, settleMs = 300): boolean {
  const [matches, setMatches] = useState(() => window.matchMedia(query).matches);
  useEffect(() => {
    const list = window.matchMedia(query);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const update = () => {
      clearTimeout(timer);
      timer = setTimeout(() => setMatches(list.matches), settleMs);
    };
    setMatches(list.matches);
    list.addEventListener('change', update);
    return () => {
      clearTimeout(timer);
      list.removeEventListener('change', update);
    };
  }, [query, settleMs]);
  return matches;
}
