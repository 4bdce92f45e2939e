/** The part of the Khronos glTF validator (npm gltf-validator) the rigger's tests use. */
declare module 'gltf-validator' {
  export interface ValidationMessage {
    code: string;
    message: string;
    /** 0 error, 1 warning, 2 information, 3 hint. */
    severity: number;
    pointer?: string;
  }
  export interface ValidationReport {
    issues: { numErrors: number; numWarnings: number; messages: ValidationMessage[] };
  }
  export function validateBytes(data: Uint8Array, options?: { maxIssues?: number; externalResourceFunction?: (uri: string) => Promise<Uint8Array> }): Promise<ValidationReport>;
  const validator: { validateBytes: typeof validateBytes };
  export default validator;
}
