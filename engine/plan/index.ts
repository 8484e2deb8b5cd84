// The compiler: cohorts -> Plan (slots, clause tests, event index, dependency order).

export { compilePlan, type CompileOptions } from './compile.js';
export { Plan } from './plan.js';
