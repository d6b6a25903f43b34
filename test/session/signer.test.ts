import { maskedIdOf, signerIdSetting, signerOf } from '../../src/session';

/** Subjects in node:crypto's form (one attribute per line), as a Singpass certificate's: the NRIC in serialNumber. */
const SUBJECT = 'C=SG\nCN=TAN AH KOW\nserialNumber=S1234567D';

describe('the signer as a flow may show it', () => {
  it('the name only by default; the NRIC masked to its last four characters when asked, never in full', () => {
    expect(signerOf({ subject: SUBJECT })).toEqual({ name: 'TAN AH KOW' });
    expect(signerOf({ subject: SUBJECT }, 'none')).toEqual({ name: 'TAN AH KOW' });
    expect(signerOf({ subject: SUBJECT }, 'masked')).toEqual({ name: 'TAN AH KOW', maskedId: '*****567D' });
    expect(JSON.stringify(signerOf({ subject: SUBJECT }, 'masked'))).not.toContain('S1234567D');
  });

  it('an NRIC in the name is masked too; a subject without a name or an id gives what it has', () => {
    expect(signerOf({ subject: 'C=SG\nCN=S7654321A' }, 'masked')).toEqual({ name: '*****321A' });
    expect(signerOf({ subject: 'C=SG\nserialNumber=F1234567N' }, 'masked')).toEqual({ maskedId: '*****567N' });
  });

  it('a serialNumber not shaped like an NRIC/FIN keeps only its last four characters', () => {
    expect(maskedIdOf('CN=X\nserialNumber=AB-99887766')).toBe('*******7766');
    expect(maskedIdOf('CN=X\nserialNumber=12')).toBe('*12');
    expect(maskedIdOf('CN=X')).toBeUndefined();
  });

  it('a node setting other than "masked" is "none": the full id is never a choice', () => {
    expect(signerIdSetting('masked')).toBe('masked');
    expect(signerIdSetting('full')).toBe('none');
    expect(signerIdSetting(undefined)).toBe('none');
  });
});
