import type { InteractionView } from './types';
import { describe } from './inbox-items';

const KEY = 'sage.alerts';

export interface AlertSettings {
  notify: boolean;
  sound: boolean;
}

export function alertSettings(): AlertSettings {
  try {
    const saved = JSON.parse(localStorage.getItem(KEY) ?? '{}') as Partial<AlertSettings>;
    return { notify: saved.notify === true, sound: saved.sound === true };
  } catch {
    return { notify: false, sound: false };
  }
}

export function saveAlertSettings(settings: AlertSettings): void {
  localStorage.setItem(KEY, JSON.stringify(settings));
}

/** Tells the person about requests that just arrived, the way they opted in to. */
export function announce(fresh: readonly InteractionView[]): void {
  if (fresh.length === 0) return;
  const { notify, sound } = alertSettings();
  if (notify && typeof Notification !== 'undefined' && Notification.permission === 'granted') {
    for (const item of fresh.slice(0, 3)) {
      const { what, detail } = describe(item);
      new Notification(`Sage: ${what}`, { body: detail ?? '', tag: item.id });
    }
  }
  if (sound) beep();
}

/** A short tone made in the page: no audio file to load (the CSP allows only this origin anyway). */
function beep(): void {
  try {
    const ctx = new AudioContext();
    const osc = ctx.createOscillator();
    const gain = ctx.createGain();
    osc.frequency.value = 880;
    gain.gain.value = 0.08;
    osc.connect(gain).connect(ctx.destination);
    osc.start();
    osc.stop(ctx.currentTime + 0.15);
    osc.onended = () => void ctx.close();
  } catch {
    // No audio device or autoplay blocked: the count in the tab title still says it.
  }
}
