export function hhmm(iso: string | null | undefined): string {
  return iso ? `${iso.slice(11, 16)} UTC` : 'an unknown time';
}

export function via(channel: string | undefined): string {
  if (!channel) return '';
  if (channel === 'web') return ' in the web page';
  if (channel === 'cli') return ' with sage respond';
  return ` in ${channel}`;
}

/**
 * A message in parts of at most `max` characters, cut at line ends where it can (a part never
 * ends inside a line unless that line alone is too long): joined with newlines they give it back.
 */
export function splitText(text: string, max: number | undefined): string[] {
  if (!max || text.length <= max) return [text];
  const parts: string[] = [];
  let rest = text;
  while (rest.length > max) {
    const cut = rest.lastIndexOf('\n', max);
    if (cut > 0) {
      parts.push(rest.slice(0, cut));
      rest = rest.slice(cut + 1);
    } else {
      parts.push(rest.slice(0, max));
      rest = rest.slice(max);
    }
  }
  parts.push(rest);
  return parts;
}

/**
 * An approval prompt that fits one message: it cannot be split (its buttons belong to one
 * message), so an over-long middle (a huge title or reason) is cut and the first line (the id)
 * and the last (the typed commands) are kept, which is all a person needs to answer it.
 */
export function fitPrompt(text: string, max: number | undefined): string {
  if (!max || text.length <= max) return text;
  const lines = text.split('\n');
  const head = lines[0]!;
  const tail = lines.length > 1 ? lines[lines.length - 1]! : '';
  const room = max - head.length - tail.length - 3;
  if (room < 1) return `${text.slice(0, max - 1)}…`;
  return `${head}\n${lines.slice(1, -1).join('\n').slice(0, room)}…\n${tail}`;
}
