import type { Logger } from '@esig/http-express';

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 } as const;

/** JSON lines on stdout (errors on stderr): what log collectors expect from a container. */
export const createJsonLogger = (level: keyof typeof LEVELS): Logger => {
  const min = LEVELS[level];
  const line = (lvl: keyof typeof LEVELS) => (fields: Record<string, unknown>, msg: string) => {
    if (LEVELS[lvl] < min) return;
    const text = JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields });
    (lvl === 'error' ? process.stderr : process.stdout).write(`${text}\n`);
  };
  return { info: line('info'), warn: line('warn'), error: line('error') };
};
