// The compiled form of a condition: a test of one property value (undefined when the property is missing).

export type ValueTest = (value: unknown) => boolean;
