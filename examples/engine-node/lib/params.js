// Reading a command's params (docs/engine-protocol.md, "Commands"): params
// come by position, trailing ones may be left out and are then zero, empty or
// false. A param of the wrong type is answered `rejected`, never a crash.

import { rejected } from './errors.js';

/** Params reads one command's params array. */
export class Params {
  constructor(method, params) {
    if (params !== undefined && !Array.isArray(params)) {
      throw rejected(`${method}: params must be an array`);
    }
    this.method = method;
    this.list = params ?? [];
  }

  #at(i, name, type, zero) {
    const v = this.list[i];
    if (v === undefined || v === null) return zero;
    if (!type(v)) throw rejected(`${this.method}: param ${i} (${name}) has the wrong type`);
    return v;
  }

  /** string is param i as a string ("" when absent). */
  string(i, name) {
    return this.#at(i, name, (v) => typeof v === 'string', '');
  }

  /** bool is param i as a boolean (false when absent). */
  bool(i, name) {
    return this.#at(i, name, (v) => typeof v === 'boolean', false);
  }

  /** object is param i as a plain object ({} when absent). */
  object(i, name) {
    return this.#at(i, name, (v) => typeof v === 'object' && !Array.isArray(v), {});
  }

  /** strings is param i as an array of strings ([] when absent). */
  strings(i, name) {
    return this.#at(i, name, (v) => Array.isArray(v) && v.every((s) => typeof s === 'string'), []);
  }

  /** objects is param i as an array of objects ([] when absent). */
  objects(i, name) {
    return this.#at(
      i,
      name,
      (v) => Array.isArray(v) && v.every((o) => o !== null && typeof o === 'object' && !Array.isArray(o)),
      [],
    );
  }
}
