// A small structured logger on stderr: one line per record, level, message
// and attributes as JSON.

/** logger is a console-like {info, warn, error}. */
export function logger({ stream = process.stderr } = {}) {
  const line = (level) => (msg, attrs) => {
    const rec = { time: new Date().toISOString(), level, msg };
    stream.write(`${JSON.stringify(attrs === undefined ? rec : { ...rec, ...attrs })}\n`);
  };
  return { info: line('INFO'), warn: line('WARN'), error: line('ERROR') };
}
