/** The only source of time in the core. Tests pass a controllable clock; servers pass the system one. */
export interface Clock {
  /** The current instant. Successive calls never go backwards in a real implementation. */
  now(): Date;
}
