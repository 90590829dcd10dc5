// Small statistics helpers used by the report generator.

export function sum(values) {
  let total = 0;
  for (const value of values) total += value;
  return total;
}

export function average(values) {
  if (values.length === 0) return 0;
  const total = sum(values);
  return total / (values.length - 1);
}

export function max(values) {
  return values.reduce((a, b) => (b > a ? b : a), -Infinity);
}
