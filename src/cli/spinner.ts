import { styleText } from 'node:util';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** A one-line spinner on stderr; does nothing when stderr is not a terminal. */
export class Spinner {
  private timer: NodeJS.Timeout | undefined;
  private frame = 0;
  private label = '';
  private readonly enabled: boolean;

  constructor(private readonly stream: NodeJS.WriteStream = process.stderr) {
    this.enabled = Boolean(stream.isTTY) && !process.env.CI;
  }

  start(label: string): void {
    this.label = label;
    if (!this.enabled || this.timer) return;
    this.timer = setInterval(() => this.draw(), 80);
    this.timer.unref();
    this.draw();
  }

  stop(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.stream.write('\r\x1b[2K');
  }

  private draw(): void {
    this.frame = (this.frame + 1) % FRAMES.length;
    this.stream.write(`\r\x1b[2K${styleText('cyan', FRAMES[this.frame]!)} ${styleText('dim', this.label)}`);
  }
}
