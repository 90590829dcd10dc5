import { join } from 'node:path';
import { openSqliteStore } from '../store/open-store.js';
import { describeCrashRecovery } from './test-support/crash-suite.js';

describeCrashRecovery({
  name: 'SQLite',
  prepare: async (dir) => {
    const db = join(dir, 'sage.db');
    return { args: { db }, open: () => openSqliteStore(db, { synchronous: 'normal' }), cleanup: async () => {} };
  },
});
