// Confining what an external agent's process can touch on its own (bubblewrap), and making the
// processes a run starts die with the Sage process that started them.
export { confine, type ConfineOptions, type Confinement, type Overlay } from './confine.js';
export { masksFor, type Mask } from './masks.js';
export { sandboxAvailable } from './available.js';
export { killWithSage, guardianPid } from './guardian.js';
export { SandboxUnavailableError } from './errors.js';
