// Python's `repr` of a float (shortest round-trip digits), so canonical bytes match the Python
// implementation.

import { CanonicalEncodeError } from "./errors.ts";

/**
 * Formats a finite double exactly like CPython's `repr(float)`: shortest round-trip digits,
 * positional notation for decimal exponents -4..15, otherwise `d.ddde±XX`.
 */
export function pythonFloatRepr(x: number): string {
  if (!Number.isFinite(x)) {
    throw new CanonicalEncodeError(`${x} has no JSON form (NaN and Infinity are refused)`);
  }
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const sign = x < 0 ? "-" : "";
  // String(x) yields the shortest digits that round-trip (same digits Python picks).
  const text = String(Math.abs(x));
  let digits: string;
  let exponent: number; // decimal exponent of the first digit
  const e = text.indexOf("e");
  if (e >= 0) {
    const mantissa = text.slice(0, e);
    exponent = Number(text.slice(e + 1));
    digits = mantissa.replace(".", "");
  } else {
    const dot = text.indexOf(".");
    const intPart = dot >= 0 ? text.slice(0, dot) : text;
    const fracPart = dot >= 0 ? text.slice(dot + 1) : "";
    if (intPart !== "0") {
      exponent = intPart.length - 1;
      digits = intPart + fracPart;
    } else {
      const firstNonZero = fracPart.search(/[1-9]/);
      exponent = -(firstNonZero + 1);
      digits = fracPart.slice(firstNonZero);
    }
  }
  digits = digits.replace(/0+$/, "");
  if (digits === "") digits = "0";
  if (exponent < -4 || exponent >= 16) {
    const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const expSign = exponent < 0 ? "-" : "+";
    const expDigits = String(Math.abs(exponent)).padStart(2, "0");
    return `${sign}${mantissa}e${expSign}${expDigits}`;
  }
  if (exponent < 0) return `${sign}0.${"0".repeat(-exponent - 1)}${digits}`;
  const intDigits = digits.slice(0, exponent + 1).padEnd(exponent + 1, "0");
  const fracDigits = digits.slice(exponent + 1);
  return `${sign}${intDigits}.${fracDigits === "" ? "0" : fracDigits}`;
}
