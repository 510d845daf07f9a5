/* layer_check: an empty program that links one layer library whole (CMakeLists.txt,
 * bm_layer_check), so an undefined reference to a layer it may not use fails the build. */
int main(void)
{
	return 0;
}
