import { useState } from 'react';
import { alertSettings, saveAlertSettings } from '../alerts';

/** Opt-in desktop notifications and a sound for new requests; both off until the person turns them on. */
export function AlertSettings() {
  const [settings, setSettings] = useState(alertSettings);
  const [note, setNote] = useState<string>();
  const change = async (next: typeof settings) => {
    if (next.notify && !settings.notify) {
      if (typeof Notification === 'undefined') return setNote('This browser cannot show notifications.');
      const permission = await Notification.requestPermission();
      if (permission !== 'granted') return setNote('Notifications are blocked for this site in the browser settings.');
    }
    setNote(undefined);
    saveAlertSettings(next);
    setSettings(next);
  };
  return (
    <fieldset className="alert-settings">
      <legend>When a new request arrives</legend>
      <label>
        <input type="checkbox" checked={settings.notify} onChange={(e) => void change({ ...settings, notify: e.target.checked })} /> Show a desktop notification
      </label>
      <label>
        <input type="checkbox" checked={settings.sound} onChange={(e) => void change({ ...settings, sound: e.target.checked })} /> Play a sound
      </label>
      {note ? <p className="meta">{note}</p> : null}
    </fieldset>
  );
}
