import { appearanceFromSettings } from '../../src/setup';
import { nextSignerAppearance } from '../../src/session';

const LABELS = { where: 'Create Session', fields: { appearance: 'Signature Box', 'appearance.rect': 'Box Rectangle', 'appearance.page': 'Box Page' } };

describe('appearanceFromSettings', () => {
  test.each([
    [{}, {}],
    [{ placement: 'corner', page: 'first', corner: 'top-left', size: '150, 50' }, { page: 'first', corner: 'top-left', size: [150, 50] }],
    [{ placement: 'corner', page: '3' }, { page: 3 }],
    [{ placement: 'rect', rect: '350, 60 560 132', page: 2 }, { page: 2, rect: [350, 60, 560, 132] }],
    [{ placement: 'field', field: 'Sign here' }, { field: 'Sign here' }],
    [{ placement: 'nextEmptyField', corner: 'bottom-left' }, { nextEmptyField: true, corner: 'bottom-left' }],
    [{ placement: 'invisible', rect: 'ignored' }, undefined],
  ])('%j → %j', (settings, expected) => {
    expect(appearanceFromSettings(settings)).toEqual(expected);
  });

  test('an image goes in as base64 and is checked', () => {
    const jpegHead = Buffer.from('ffd8ffc0000b080010002001011100', 'hex');
    expect(appearanceFromSettings({ image: jpegHead })).toEqual({ image: jpegHead.toString('base64') });
    expect(() => appearanceFromSettings({ image: Buffer.from('GIF89a') })).toThrow(expect.objectContaining({ code: 'INVALID_INPUT', details: expect.objectContaining({ field: 'appearance.image' }) }));
  });

  test.each([
    [{ placement: 'rect' }, 'Box Rectangle'],
    [{ placement: 'rect', rect: '1, 2, 3' }, 'Box Rectangle'],
    [{ placement: 'corner', page: '0' }, 'Box Page'],
    [{ placement: 'somewhere' }, 'Signature Box'],
  ])('%j is refused naming the form field %s', (settings, field) => {
    expect(() => appearanceFromSettings(settings, LABELS)).toThrow(expect.objectContaining({ code: 'INVALID_INPUT', details: expect.objectContaining({ field }) }));
  });
});

describe('nextSignerAppearance', () => {
  test.each([
    [undefined, undefined],
    [{}, {}],
    [{ page: 'last' as const, corner: 'bottom-left' as const }, { page: 'last', corner: 'bottom-left' }],
    [{ field: 'Landlord' }, { nextEmptyField: true }],
    [{ page: 2, rect: [1, 2, 300, 400] as [number, number, number, number], image: 'abc' }, { page: 2, image: 'abc', nextEmptyField: true }],
    [{ nextEmptyField: true }, { nextEmptyField: true }],
  ])('after %j the next signer gets %j', (previous, expected) => {
    expect(nextSignerAppearance(previous)).toEqual(expected);
  });
});
