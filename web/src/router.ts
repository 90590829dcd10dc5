import { useEffect, useState } from 'react';

/**
 * Hash routes (`#/runs/abc`): the server answers `/runs/...` with the API, so the page's own
 * routes live after the `#` and a refresh always loads the UI.
 */
export function useRoute(): string[] {
  const read = () => window.location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const onChange = () => setRoute(read());
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

export function navigate(path: string): void {
  window.location.hash = path;
}
